"""Exit codes of ``python -m profiling_worker compare`` (stdlib only: the worker's parser
imports this before it knows the interpreter has pandas and scipy)."""

EXIT_OK = 0  # every region x config judged, none regressed
EXIT_REGRESSED = 1  # at least one regressed, whatever else happened
EXIT_BAD_INPUT = 2  # usage error, a bundle that cannot be read, a metric it lacks, or
# a summary file that cannot be written (the judgement is printed all the same)
EXIT_NOT_JUDGED = 3  # none regressed, at least one not comparable (or nothing to judge)
HELP = (f"exit codes: {EXIT_OK} all judged, none regressed; {EXIT_REGRESSED} at least one region "
        f"x config regressed; {EXIT_NOT_JUDGED} none regressed but at least one could not be "
        f"judged (not comparable); {EXIT_BAD_INPUT} bad usage, a bundle that cannot be read, a "
        "--metric the bundles lack, or a --markdown/--junit file that cannot be written")
