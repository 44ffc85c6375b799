"""Slots of the download route (``app/streamlit_patches/download_route.py``): how many downloads
run at once, per server and per browser session, and how many of them inflate a ``.ncu-rep.gz``;
and the queue of those that wait for a slot. A download holds its slots from its start until its
last byte is sent or its client leaves, so the bounds cover the temporary disk of inflated
reports too (at most ``inflations`` x 2 GiB). Forty concurrent report downloads from one tab
filled the server's thread pool for minutes (issue 41); with these bounds the others wait their
turn, holding no thread.

The queue is first come, first served among the downloads that could start: a download starts
when its slots are free and no download queued before it could start now too, so a new click
never overtakes one that waits, while one held by its own tab's bound holds no other tab back.
A queued download is known by its link's token and must ask again (:meth:`DownloadSlots.admit`
or :meth:`DownloadSlots.standing`) within :data:`STALE_S`, else it is taken to be gone (its
tab closed) and forgotten: a waiting download is a page that asks, never a held request
(``download_route``'s docstring says why).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

#: Most downloads one server streams at once (each holds a thread only while it reads a chunk).
MAX_DOWNLOADS = 8
#: Most downloads one browser session (a tab) has running at once; its others wait their turn.
MAX_SESSION_DOWNLOADS = 2
#: Most ``.ncu-rep.gz`` inflations one server runs at once (each takes a CPU core while it
#: inflates and up to 2 GiB of temporary disk until its download ends).
MAX_INFLATIONS = 2
#: A queued download not asked for in this long (s) is forgotten: its page asks every second
#: (a hidden tab's timers still run once a second), so ten missed asks mean its tab is gone.
#: Until then a gone download whose turn came holds the ones behind it back.
STALE_S = 10.0


@dataclass(frozen=True)
class Held:
    """The slots one download holds: its session's and, for an inflation, an inflation slot."""

    session_id: str
    inflating: bool


@dataclass(frozen=True)
class Queued:
    """Where a queued download stands: ``ahead`` downloads were queued before it and still
    wait; ``why`` is what holds it, in words for the page (``None``: its turn, it may start)."""

    ahead: int
    why: str | None


@dataclass
class _Waiter:
    session_id: str
    inflating: bool
    seen: float  # when it last asked (the clock's seconds)


class DownloadSlots:
    """Counts of downloads in flight and the queue of those waiting, thread-safe; nothing
    blocks. ``clock``: monotonic seconds (tests move their own)."""

    def __init__(self, downloads: int = MAX_DOWNLOADS, per_session: int = MAX_SESSION_DOWNLOADS,
                 inflations: int = MAX_INFLATIONS, clock: Callable[[], float] = time.monotonic):
        self.downloads, self.per_session, self.inflations = downloads, per_session, inflations
        self._clock = clock
        self._lock = threading.Lock()
        self._sessions: Counter[str] = Counter()
        self._inflating = 0
        self._queue: dict[str, _Waiter] = {}  # token -> waiter, in the order they came

    def _busy(self, session_id: str, inflating: bool) -> str | None:
        if self._sessions[session_id] >= self.per_session:
            return f"this tab already has {self.per_session} downloads running"
        if sum(self._sessions.values()) >= self.downloads:
            return f"the server is already sending {self.downloads} downloads"
        if inflating and self._inflating >= self.inflations:
            return f"the server is already inflating {self.inflations} reports for downloads"
        return None

    def _take(self, session_id: str, inflating: bool) -> Held:
        self._sessions[session_id] += 1
        self._inflating += inflating
        return Held(session_id, inflating)

    def admit(self, token: str, session_id: str, inflating: bool) -> Held | Queued:
        """The slots of the download of link ``token`` (of ``session_id``; ``inflating``: a
        ``.ncu-rep.gz``) if it is its turn, out of the queue; else where it stands in the
        queue, which it joins at the end the first time. Give held slots back with
        :meth:`give_back`."""
        with self._lock:
            standing = self._stand(token, session_id, inflating)
            if standing.why is not None:
                return standing
            del self._queue[token]
            return self._take(session_id, inflating)

    def standing(self, token: str, session_id: str, inflating: bool) -> Queued:
        """Where the download of link ``token`` stands in the queue (joined at the end the
        first time), taking nothing: ``why`` is ``None`` when :meth:`admit` would start it."""
        with self._lock:
            return self._stand(token, session_id, inflating)

    def _stand(self, token: str, session_id: str, inflating: bool) -> Queued:
        now = self._clock()
        for gone in [t for t, w in self._queue.items() if now - w.seen > STALE_S]:
            del self._queue[gone]
        self._queue.setdefault(token, _Waiter(session_id, inflating, now)).seen = now
        earlier = list(self._queue.values())[:list(self._queue).index(token)]
        why = self._busy(session_id, inflating)
        if why is None and any(self._busy(w.session_id, w.inflating) is None for w in earlier):
            why = "a download queued before it goes first"
        return Queued(len(earlier), why)

    def give_back(self, held: Held) -> None:
        """Free the slots :meth:`admit` gave."""
        with self._lock:
            self._sessions[held.session_id] -= 1
            if self._sessions[held.session_id] <= 0:
                del self._sessions[held.session_id]
            self._inflating -= held.inflating

    def running(self) -> int:
        """Downloads in flight now, all sessions together."""
        with self._lock:
            return sum(self._sessions.values())

    def waiting(self) -> int:
        """Downloads in the queue now (one gone stale stays counted until the next look-up)."""
        with self._lock:
            return len(self._queue)


#: The server's slots (one per process, as the route).
SLOTS = DownloadSlots()
