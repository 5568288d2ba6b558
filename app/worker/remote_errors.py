"""What a remote worker's calls to the platform end in, besides an answer (``app.worker.remote``)."""


class Refused(Exception):
    """The platform refused this worker's credential (revoked or unknown): the worker stops."""


class LeaseLost(Exception):
    """The job is no longer this worker's (its lease was taken over): its result would be refused."""
