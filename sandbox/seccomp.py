"""The system calls a sandboxed program may not make, as a seccomp filter that bwrap installs.

Mainly: no new user namespace (``unshare``/``clone`` with ``CLONE_NEWUSER``; ``clone3``, whose flags a
filter cannot read, answers ENOSYS so that the C library falls back to ``clone``). Inside a user
namespace of its own a program could mount file systems, a memory-backed one without any size limit
among them. When the runner is not root, bwrap's ``--disable-userns`` says the same; as root there is
no user namespace to disable it in, so this filter is what holds. Also refused, as container runtimes
refuse them: the kernel keyring, BPF, performance counters, userfaultfd, io_uring and the calls that
administer the machine. libseccomp (through pyseccomp) compiles the filter for this architecture;
system calls of any other architecture end the process.
"""

from __future__ import annotations

import errno
import functools
import tempfile

CLONE_NEWUSER = 0x10000000
REFUSED = (
    *("keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd"),
    *("io_uring_setup", "io_uring_enter", "io_uring_register", "kexec_load", "kexec_file_load"),
    *("init_module", "finit_module", "delete_module", "acct", "swapon", "swapoff", "reboot"),
    *("mount", "umount2", "pivot_root", "setns", "open_by_handle_at", "name_to_handle_at"),
)


class SeccompUnavailable(RuntimeError):
    """libseccomp cannot be loaded here."""


@functools.cache
def filter_program() -> bytes:
    """The compiled filter (BPF), as bwrap's ``--seccomp`` reads it."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as exc:  # pyseccomp loads libseccomp.so.2 when imported
        raise SeccompUnavailable(f"libseccomp cannot be loaded ({exc}); install Debian's libseccomp2") from None
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for call in ("unshare", "clone"):
        rules.add_rule(
            seccomp.ERRNO(errno.EPERM), call, seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)
        )
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for call in REFUSED:
        try:
            rules.add_rule(seccomp.ERRNO(errno.EPERM), call)
        except (ValueError, RuntimeError):  # a call this architecture does not have
            continue
    with tempfile.TemporaryFile() as file:
        rules.export_bpf(file)
        file.seek(0)
        return file.read()
