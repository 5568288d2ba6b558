"""Hosted baseline runs: what organizers start, follow and cancel, and the steps of the job that runs a
system of the ``baselines`` library on a phase and turns its output into a submission."""
