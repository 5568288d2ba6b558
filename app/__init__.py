"""Podium's application: the only package that knows HTTP, SQL, queues and the file system layout."""

import os

# numpy's BLAS runs one thread in Podium's processes unless the operator sets OPENBLAS_NUM_THREADS. Its products here
# (an interval's or a comparison's weighted sums) are small: a second thread doubled their CPU time and made them no
# faster, on an idle machine as on a busy one (bench/RESULTS.md, "BLAS on one thread"), and every web and worker
# process would otherwise start as many BLAS threads as the machine has cores. OpenBLAS reads the variable as it
# loads, and every Podium process (web, workers, the command line) imports this package before numpy. Calling
# OpenBLAS's own setter (threadpoolctl) instead is not reliable from a request's thread: with numpy's OpenBLAS
# 0.3.31, once the main thread had set a count, a count set from another thread was ignored.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
