"""Format adapters of the seed tasks; importing this package registers their scorers."""

import importlib
import pkgutil

# Each module registers its scorers with @register when imported. Importing by discovery lets
# task modules be added without touching this file.
for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
