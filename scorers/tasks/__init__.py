"""Format adapters of the seed tasks. Each module registers its scorers with ``@register`` when it is imported;
``scorers.registry.BUILT_IN`` names the module of each scorer, so that only the scorer used is imported."""
