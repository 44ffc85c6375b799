"""The block layout of an Nsight Compute report (``.ncu-rep``), checked before ``ncu_report``
opens it.

A report is ``NVR\\0``, a little-endian u32 length and a file header, then blocks: a u32
length, a block header (protobuf) whose field 5 is the byte length of the payload that follows
it, and the payload. Bytes after the last block are not a report: a run of zeros reads as
millions of empty blocks, and ``ncu_report`` then takes about 64 MB of memory per MiB of zeros
(issue 26: a 1.1 MB upload took 4.5 GB). :class:`ReportWalk` follows the lengths over a stream
(no payload is kept) and stops at the first length that cannot be one, so a padded report is
refused at the byte where the padding starts, before any of it is parsed. A report cut short
(an interrupted copy) passes: ``ncu_report`` reads its complete blocks, and
:meth:`ReportWalk.missing` says how many bytes its last block lacks, so the import calls it cut
short rather than empty.

Valid blocks can pad a report too: 6-byte blocks with an empty payload (issue 41: a 1.1 MB
``.ncu-rep.gz`` padded so took the import worker to 1.3 GB, about 22 MB per MiB of padding).
So the walk also keeps a budget of blocks: at most :data:`MAX_EMPTY_BLOCKS` with no payload
and :data:`MAX_BLOCKS` in all, refused at the block that exceeds it.

The layout was read from the reports of ncu 2025.3 and 2026.3 in tests/fixtures and
app/bundled (all end exactly at a block boundary; every one has 8 blocks with no payload and
12 to 214 blocks in all, at 13 KB to 530 KB per block).
"""

from __future__ import annotations

import struct

MAGIC = b"NVR\x00"
#: Longest file or block header accepted (the ones seen are 2 bytes to 17 KB).
MAX_HEADER_BYTES = 1 << 20
_PAYLOAD_FIELD = 5
#: Most blocks with no payload a report may hold (the reports seen hold 8, whatever their size).
MAX_EMPTY_BLOCKS = 256
#: Most blocks a report may hold (the reports seen: up to 214 for 23 MB; ``ncu_report`` takes
#: about 130 bytes of memory per block, so this bounds that at about 65 MB).
MAX_BLOCKS = 500_000


class ReportLayoutError(ValueError):
    """The bytes do not follow the report's block layout; the message names the offset."""


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ReportLayoutError("a block header ends inside a number")
        byte = buf[i]
        value |= (byte & 0x7F) << shift
        i, shift = i + 1, shift + 7
        if byte < 0x80:
            return value, i


def payload_length(header: bytes) -> int:
    """Field 5 (varint) of one protobuf block header, 0 when absent.

    Raises:
        ReportLayoutError: the header is not protobuf wire format.
    """
    i, found = 0, 0
    while i < len(header):
        key, i = _varint(header, i)
        field, wire = key >> 3, key & 7
        if field == 0:
            raise ReportLayoutError("a block header holds field number 0")
        if wire == 0:
            value, i = _varint(header, i)
            found = value if field == _PAYLOAD_FIELD else found
        elif wire == 2:
            size, i = _varint(header, i)
            i += size
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            raise ReportLayoutError(f"a block header uses wire type {wire}")
        if i > len(header):
            raise ReportLayoutError("a block header field runs past the header")
    return found


class ReportWalk:
    """Checks a report's bytes as they arrive (:meth:`feed`), keeping at most one header.

    Attributes:
        offset: bytes seen so far.
        blocks: blocks completed so far.
        empty_blocks: blocks with no payload so far.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.offset = 0
        self.blocks = 0
        self.empty_blocks = 0
        self._pending = bytearray()   # bytes of the length or header being read
        self._need = len(MAGIC) + 4   # bytes still wanted in _pending
        self._state = "magic"         # magic -> file-header -> length <-> header
        self._skip = 0                # payload bytes still to pass over
        self._at = 0                  # offset where the current item started

    def _fail(self, what: str) -> ReportLayoutError:
        return ReportLayoutError(f"{self.name}: not an Nsight Compute report layout at byte "
                                 f"{self._at:,}: {what}")

    def feed(self, chunk: bytes) -> None:
        """Check the next bytes of the file.

        Raises:
            ReportLayoutError: the bytes break the layout (the message names the byte offset).
        """
        view, i = memoryview(chunk), 0
        while i < len(view):
            if self._skip:
                step = min(self._skip, len(view) - i)
                self._skip -= step
                i += step
                continue
            if not self._pending:
                self._at = self.offset + i
            take = min(self._need, len(view) - i)
            self._pending += view[i:i + take]
            self._need -= take
            i += take
            if self._need == 0:
                self._advance()
        self.offset += len(chunk)

    def _advance(self) -> None:
        data = bytes(self._pending)
        self._pending.clear()
        if self._state == "magic":
            if data[:4] != MAGIC:
                raise self._fail("it does not start with NVR\\0")
            self._header_length(data[4:], "file-header")
        elif self._state == "length":
            self._header_length(data, "header")
        elif self._state == "file-header":
            self._begin_block()
        else:  # a block header: its payload follows
            try:
                self._skip = payload_length(data)
            except ReportLayoutError as exc:
                raise self._fail(str(exc)) from None
            self.blocks += 1
            self.empty_blocks += self._skip == 0
            self._check_budget()
            self._begin_block()

    def _check_budget(self) -> None:
        if self.empty_blocks > MAX_EMPTY_BLOCKS:
            raise self._fail(f"more than {MAX_EMPTY_BLOCKS:,} blocks with no payload (a report "
                             "holds a few): padding made of empty blocks")
        if self.blocks > MAX_BLOCKS:
            raise self._fail(f"more than {MAX_BLOCKS:,} blocks (reports seen hold a few "
                             "hundred): padding made of small blocks")

    def _header_length(self, raw: bytes, state: str) -> None:
        (length,) = struct.unpack("<I", raw)
        if not 0 < length <= MAX_HEADER_BYTES:
            raise self._fail(f"a header of {length:,} bytes (expected 1 to "
                             f"{MAX_HEADER_BYTES:,}): bytes after the report's last block, "
                             "or not a report")
        self._state, self._need = state, length

    def missing(self) -> int:
        """After the whole file was fed: the bytes its last item lacks (a block's payload, a
        header or a length); 0 when the file ends where a block ends."""
        if self._state == "length" and not self._pending:
            return self._skip
        return self._skip + self._need

    def _begin_block(self) -> None:
        self._state, self._need = "length", 4
