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
A queued download is known by its link's token. It is present while its page holds an ask open
(:meth:`DownloadSlots.hold`, the route's long poll, which needs no timer of the page to fire)
and for :data:`STALE_S` after it was last asked for or its last ask was answered
(:meth:`DownloadSlots.admit`, :meth:`DownloadSlots.standing`, :meth:`DownloadSlots.release`);
past that it is taken to be gone (its tab closed) and forgotten, and at once when the client of
its held ask leaves (:meth:`DownloadSlots.release` with ``left``). A waiting download is a page
that asks, never a held download request (``download_route``'s docstring says why).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from profiling_worker.bundle.number_text import counted

#: Most downloads one server streams at once (each holds a thread only while it reads a chunk).
MAX_DOWNLOADS = 8
#: Most downloads one browser session (a tab) has running at once; its others wait their turn.
MAX_SESSION_DOWNLOADS = 2
#: Most ``.ncu-rep.gz`` inflations one server runs at once (each takes a CPU core while it
#: inflates and up to 2 GiB of temporary disk until its download ends).
MAX_INFLATIONS = 2
#: A queued download with no ask held open, not asked for in this long (s), is forgotten: its
#: page asks again as soon as an ask is answered (or, for an ask not held, after the route's
#: POLL_S), so ten seconds without an ask mean its tab is gone, or frozen by the browser.
#: Until then a gone download whose turn came holds the ones behind it back.
STALE_S = 10.0
#: Most queued downloads whose asks are held open at once, all sessions (tabs) of this server
#: process together: the first of the queue; the others are answered at once. A held ask keeps
#: one of the browser's connections to the server (Chrome opens 6 per host, for all its tabs:
#: Chromium issue 12066), which its running downloads and the dashboard's requests share too;
#: 2 running downloads and 2 held asks leave 2 free. The server cannot tell which tabs share a
#: browser, so the bound is the process's: per tab, a user with three tabs held 6 asks and
#: left their dashboard no connection.
MAX_HELD_ASKS = 2


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


@dataclass(frozen=True)
class Ask:
    """One ask of a queued download's page (:meth:`DownloadSlots.hold`): its link's ``token``,
    session and kind, which question of it this was (``asked``), and whether it is held open
    (``held``: it keeps the download present until :meth:`DownloadSlots.release`)."""

    token: str
    session_id: str
    inflating: bool
    asked: int
    held: bool


@dataclass
class _Waiter:
    session_id: str
    inflating: bool
    seen: float  # when it was last asked for, or an ask of it answered (the clock's seconds)
    held: int = 0  # its asks held open now: while one is, it is present
    asked: int = 0  # how often it was asked for: a reload's ask tells it from a page that left


class DownloadSlots:
    """Counts of downloads in flight and the queue of those waiting, thread-safe; nothing
    blocks. ``clock``: monotonic seconds (tests move their own), also the route's for how long
    it holds an ask."""

    def __init__(self, downloads: int = MAX_DOWNLOADS, per_session: int = MAX_SESSION_DOWNLOADS,
                 inflations: int = MAX_INFLATIONS, clock: Callable[[], float] = time.monotonic):
        self.downloads, self.per_session, self.inflations = downloads, per_session, inflations
        self.clock = clock
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
            return (f"the server is already inflating {counted(self.inflations, 'report')} "
                    "for downloads")
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

    def hold(self, token: str, session_id: str, inflating: bool) -> Ask:
        """An ask of the page of the download of link ``token`` (joined at the end of the queue
        the first time), held open unless its turn has come or :data:`MAX_HELD_ASKS` downloads
        were queued before it, whichever session queued them. A held ask keeps it present until
        :meth:`release`; look at its standing meanwhile with :meth:`where`."""
        with self._lock:
            queued = self._stand(token, session_id, inflating)
            waiter = self._queue[token]
            held = queued.why is not None and queued.ahead < MAX_HELD_ASKS
            waiter.held += held
            return Ask(token, session_id, inflating, waiter.asked, held)

    def where(self, ask: Ask) -> Queued:
        """Where the download of ``ask`` stands now, as :meth:`standing` says, without asking
        for it (its held ask keeps it present); joined again at the end if it was started or
        forgotten meanwhile (its link opened elsewhere)."""
        with self._lock:
            self._forget_stale()
            if ask.token in self._queue:
                return self._place(ask.token)
            queued = self._stand(ask.token, ask.session_id, ask.inflating)
            self._queue[ask.token].held += ask.held
            return queued

    def release(self, ask: Ask, left: bool) -> None:
        """The ask of :meth:`hold` was answered (``left`` False: the download stays present for
        :data:`STALE_S`, the time its page has to ask again) or its client closed the
        connection (``left``: the download is forgotten at once, unless another ask of it is
        held or it was asked for since, as a reloaded page does)."""
        with self._lock:
            waiter = self._queue.get(ask.token)
            if waiter is None or not ask.held or not waiter.held:  # started, or joined anew
                return
            waiter.held -= 1
            waiter.seen = self.clock()
            if left and not waiter.held and waiter.asked == ask.asked:
                del self._queue[ask.token]

    def _forget_stale(self) -> None:
        now = self.clock()
        for gone in [t for t, w in self._queue.items()
                     if not w.held and now - w.seen > STALE_S]:
            del self._queue[gone]

    def _stand(self, token: str, session_id: str, inflating: bool) -> Queued:
        self._forget_stale()
        waiter = self._queue.setdefault(token, _Waiter(session_id, inflating, self.clock()))
        waiter.seen, waiter.asked = self.clock(), waiter.asked + 1
        return self._place(token)

    def _place(self, token: str) -> Queued:
        waiter = self._queue[token]
        earlier = list(self._queue.values())[:list(self._queue).index(token)]
        why = self._busy(waiter.session_id, waiter.inflating)
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
