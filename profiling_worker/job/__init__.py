"""Running one job: check the job folder, validate, probe, collect through a backend, write the
bundle (``runner``, ``results``), the warm worker (``serve``) and the quick exit."""
