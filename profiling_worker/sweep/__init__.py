"""Sweeps: one array task on a cluster node (``task``, submitit's pickled entry point), the merge
of the finished tasks into one bundle (``merge``) and the reference kernel (``reference``)."""
