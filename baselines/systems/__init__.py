"""The seed baseline systems; importing this package registers them.

Each module holds one system and imports its heavy libraries (scikit-learn, torch,
sentence-transformers, bm25s, simplemma) inside functions, so listing the systems stays cheap
and works where the ``baselines`` extra is not installed.
"""

import importlib
import pkgutil

# Importing by discovery lets systems be added without touching this file.
for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
