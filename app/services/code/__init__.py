"""Code phases: participants' programs run in the sandbox on a phase's hidden inputs, their output scored."""
