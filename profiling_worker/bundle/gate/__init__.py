"""The regression gate (issue 13, part 4): judge a candidate bundle against a baseline, per
region x config (:mod:`.judge`), for CI (:mod:`.report`, :mod:`.command`) and the dashboard's
compare page alike. Imports nothing of the app."""
