"""Exit codes of ``python -m profiling_worker compare`` (stdlib only: the worker's parser
imports this before it knows the interpreter has pandas and scipy). The first that applies:
1, then 3, then 4, else 0."""

EXIT_OK = 0  # every region x config judged same or improved
EXIT_REGRESSED = 1  # at least one regressed, whatever else happened
EXIT_BAD_INPUT = 2  # usage error, a bundle that cannot be read, a metric it lacks, or
# a summary file that cannot be written (the judgement is printed all the same)
EXIT_NOT_JUDGED = 3  # none regressed, at least one not comparable (or nothing to judge)
EXIT_UNDECIDED = 4  # all comparable, none regressed, at least one ambiguous or clock-explained
HELP = (f"exit codes: {EXIT_OK} all judged same or improved; {EXIT_REGRESSED} at least one "
        f"region x config regressed; {EXIT_NOT_JUDGED} none regressed but at least one could "
        f"not be judged (not comparable); {EXIT_UNDECIDED} none regressed or not comparable but "
        "at least one ambiguous (more runs would decide it) or clock-explained; "
        f"{EXIT_BAD_INPUT} bad usage, a bundle that cannot be read, a --metric the bundles "
        "lack, or a --markdown/--junit file that cannot be written")
