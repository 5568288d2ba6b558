"""Readers and writers of the seed tasks' files, as the baseline systems need them."""
