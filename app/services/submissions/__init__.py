"""Submissions: accepting an upload (size limits, quota, validation, storage), what people may see of
a submission and its scores, and what organizers and teams may change (rescoring, the chosen one)."""
