"""On-disk cache of finished runs: one pickle-free file per key, read with one ``read`` and a view per array.

Layout: ``<root>/<key[:2]>/<key>.rcs``. Each file is::

    MAGIC (b"ratecheck-store/2\n") | SHA-256 (32 bytes) | header length (8 bytes, little-endian) | header | data

The header is JSON: ``{"meta": <the entry's metadata as a JSON string>, "arrays": [[name, dtype, shape,
offset, nbytes], ...]}``; each array's bytes (C order, its dtype's byte order) lie at ``offset`` in the data,
aligned to 16 bytes. The SHA-256 covers the header length, the header and the data. Reading an entry is one
``read``, one checksum, one ``json.loads`` and a ``np.frombuffer`` view per array (a NumPy ``.npz`` parsed a
header per member with ``ast.literal_eval``: 10,000 members cost a cached check two seconds, issue #19).

Writes are atomic (temp file in the same directory, flush + fsync, ``os.replace``), so a reader sees
either the old entry or the new one, never a half-written file, and concurrent writers of one key
simply race to be the last one (every version they write is complete). A crash leaves at most a
hidden ``.<key>.*.tmp`` file, which ``keys`` ignores and ``clear`` removes.

An entry that fails to decode, whose checksum does not match, or that cannot be opened because of
the entry itself (a directory in its place, no permission) is reported as absent (``get`` returns
``None``), logged as a warning, and renamed aside to ``<key>.rcs.corrupt`` so the run is recomputed
while the bad bytes stay available for inspection. An error of the machine rather than the entry (too
many open files, an I/O error while reading) is raised naming the file, after retrying an interrupted
open: the entry stays, and the next run reads it. Entries of the first format (``<key>.npz``, written
before issue #19) are never read: the keys of runs and tasks cover this module's code, so they are
stale; ``scan`` lists them as ``legacy``, and ``prune`` and ``clear`` remove them.

Nothing is ever pickled or evaluated: dtypes must be numeric (bool, int, float, complex), and an array
is a view of bytes, so opening a cache file cannot execute code.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import logging
import math
import os
import re
import shutil
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["NullStore", "Store", "StoreScan"]

logger = logging.getLogger(__name__)

_KEY_RE = re.compile(r"[0-9a-f]{16,64}")
_SHARD_RE = re.compile(r"[0-9a-f]{2}")
SUFFIX = ".rcs"
LEGACY_SUFFIX = ".npz"  # the first format (a NumPy archive per entry): never read, removed by prune and clear
# The file's first bytes: a future change of layout makes old entries fail to decode and get recomputed
# instead of being misread.
MAGIC = b"ratecheck-store/2\n"
_ALIGN = 16
_DTYPE_RE = re.compile(r"[<>|=][biufc][0-9]{1,2}")
# Numeric kinds only: bool, signed/unsigned int, float, complex. Object arrays would need pickle and
# strings/structured/datetime arrays have no business in a run result.
_NUMERIC_KINDS = frozenset("biufc")


STALE_TMP_SECONDS = 600.0  # a temp file older than this belongs to a writer that died


@dataclass
class StoreScan:
    """What a store directory holds (``Store.scan``): entries, leftovers and their sizes."""

    entries: list[tuple[str, Path, int]] = field(default_factory=list)  # (key, path, bytes)
    temp: list[tuple[Path, float]] = field(default_factory=list)  # (path, age in seconds)
    corrupt: list[tuple[Path, int]] = field(default_factory=list)  # (path, bytes): set aside by ``get``
    legacy: list[tuple[Path, int]] = field(default_factory=list)  # (path, bytes): entries of the first format

    @property
    def entry_bytes(self) -> int:
        return sum(size for _, _, size in self.entries)

    @property
    def stale_temp(self) -> list[Path]:
        return [path for path, age in self.temp if age > STALE_TMP_SECONDS]


class Store:
    """A directory of finished runs, keyed by hex strings (config hashes)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        # The directory is created by the first ``put``, so merely naming a cache has no side effect.
        if not os.fspath(root):
            raise ValueError("the cache directory must be a non-empty path ('' would be the current folder)")
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise NotADirectoryError(f"cache directory {str(self.root)!r} exists and is not a directory")
        for parent in self.root.absolute().parents:  # found now, not when the first run is written
            if parent.exists():
                if not parent.is_dir():
                    raise NotADirectoryError(f"cache directory {str(self.root)!r} cannot be created: "
                                             f"{str(parent)!r} is not a directory")
                break
        self.puts = 0  # entries written by this object (the CLI reports it after an interrupt)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.root)!r})"

    # -- keys and paths -------------------------------------------------------------------------

    def path(self, key: str) -> Path:
        """The file that holds ``key`` (whether or not it exists)."""
        _check_key(key)
        return self.root / key[:2] / f"{key}{SUFFIX}"

    def keys(self) -> list[str]:
        """Sorted keys of the entries on disk (not checked for corruption)."""
        return sorted(key for key, _ in self._entries())

    def __contains__(self, key: object) -> bool:
        """True if ``key`` is stored and its entry loads and verifies (corrupt entries are moved aside)."""
        if not isinstance(key, str) or not _KEY_RE.fullmatch(key):
            return False
        return self.get(key) is not None

    # -- reading --------------------------------------------------------------------------------

    def get(self, key: str) -> tuple[dict[str, np.ndarray], dict] | None:
        """The stored ``(arrays, meta)`` for ``key``, or ``None`` if it is absent or unreadable (an
        unreadable entry, whatever the reason, is set aside so that the run is recomputed)."""
        path = self.path(key)
        try:
            fh = _open_retrying(path)
        except (FileNotFoundError, NotADirectoryError):  # no entry (or a file where its shard should be)
            return None
        except (IsADirectoryError, PermissionError) as exc:  # the entry itself cannot be read
            self._quarantine(key, path, None, f"{type(exc).__name__}: {exc}")
            return None
        except OSError as exc:  # too many open files, an I/O error, ...: the machine's, not the entry's
            raise _naming(exc, path) from exc
        with fh:
            # Remember which file we read, so quarantining cannot hit a good file that a concurrent
            # writer has put in its place in the meantime.
            stat = os.fstat(fh.fileno())
            try:
                return _decode(fh)
            except OSError as exc:  # reading failed (not what was read): retried by the next get
                raise _naming(exc, path) from exc
            except Exception as exc:  # what was read does not decode or verify: the entry is unusable
                reason = f"{type(exc).__name__}: {exc}"
        self._quarantine(key, path, stat, reason)
        return None

    def _quarantine(self, key: str, path: Path, stat: os.stat_result | None, reason: str) -> None:
        """Move an unreadable entry aside to ``<key>.rcs.corrupt`` (``stat``: the file that was read,
        None when it could not be opened at all)."""
        logger.warning("cache entry %s is unreadable (%s); moving it aside to recompute", key, reason)
        try:
            now = os.stat(path)
            if stat is not None and (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns) != (
                stat.st_dev,
                stat.st_ino,
                stat.st_size,
                stat.st_mtime_ns,
            ):
                return  # replaced by a writer since we read it: that version is not ours to judge
            aside = path.with_name(path.name + ".corrupt")
            if aside.is_dir() and not aside.is_symlink():
                shutil.rmtree(aside)  # an older directory set aside: os.replace cannot overwrite it
            os.replace(path, aside)
        except FileNotFoundError:
            pass  # another reader moved it aside first
        except OSError as exc:
            logger.warning("could not move unreadable cache entry %s aside: %s", key, exc)

    # -- writing --------------------------------------------------------------------------------

    def put(self, key: str, arrays: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
        """Store ``arrays`` and ``meta`` under ``key`` atomically (replacing any previous entry)."""
        path = self.path(key)
        members = _prepare_arrays(arrays)
        meta_json = _meta_json(meta)

        try:
            if path.is_dir() and not path.is_symlink():  # a directory where the entry goes: set it aside
                self._quarantine(key, path, None, "a directory where the entry should be")
            path.parent.mkdir(parents=True, exist_ok=True)
            # Same directory as the target: os.replace is only atomic within one filesystem.
            fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".tmp", dir=path.parent)
        except OSError as exc:
            raise _naming(exc, path.parent) from exc
        try:
            with os.fdopen(fd, "wb") as fh:
                _write_entry(fh, members, meta_json)
                fh.flush()
                os.fsync(fh.fileno())  # data on disk before the rename makes it visible
            os.replace(tmp, path)
            self.puts += 1
        except BaseException as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            if isinstance(exc, OSError):  # e.g. a full disk: say which file could not be written
                raise _naming(exc, path) from exc
            raise
        _fsync_dir(path.parent)

    def clear(self) -> int:
        """Delete every entry (and leftover temp / corrupt files); return the number of entries removed."""
        removed = 0
        for shard in self._shards():
            for child in list(shard.iterdir()):
                name = child.name
                stem = name.split(".")[1] if name.startswith(".") else name.split(".")[0]
                if not (_KEY_RE.fullmatch(stem) and stem[:2] == shard.name):
                    continue  # not ours: leave foreign files alone
                is_entry = name == f"{stem}{SUFFIX}"
                if is_entry or name in (f"{stem}{SUFFIX}.corrupt", f"{stem}{LEGACY_SUFFIX}",
                                        f"{stem}{LEGACY_SUFFIX}.corrupt") or (
                    name.startswith(f".{stem}.") and name.endswith(".tmp") and child.is_file()
                ):
                    removed += _unlink(child) and is_entry
            try:
                shard.rmdir()
            except OSError:
                pass  # not empty (foreign files) or gone already
        return removed

    # -- housekeeping (``ratecheck cache info|clear|prune``) ------------------------------------

    def scan(self) -> StoreScan:
        """Entries, temp files and set-aside corrupt entries on disk (nothing is opened)."""
        out = StoreScan()
        now = time.time()
        for shard in self._shards():
            for child in shard.iterdir():
                name = child.name
                try:
                    st = child.stat()
                except OSError:
                    continue  # removed meanwhile
                stem = name.split(".")[0]
                if not (_KEY_RE.fullmatch(stem) and name[:2] == shard.name):
                    if name.startswith(".") and name.endswith(".tmp") and _KEY_RE.fullmatch(name[1:].split(".")[0]):
                        out.temp.append((child, now - st.st_mtime))
                    continue
                if name == stem + SUFFIX:
                    out.entries.append((stem, child, st.st_size))
                elif name in (f"{stem}{SUFFIX}.corrupt", f"{stem}{LEGACY_SUFFIX}.corrupt"):
                    out.corrupt.append((child, st.st_size))
                elif name == stem + LEGACY_SUFFIX:
                    out.legacy.append((child, st.st_size))
        out.entries.sort()
        return out

    def read_meta(self, key: str) -> dict | None:
        """An entry's metadata without loading or verifying its arrays (None if unreadable)."""
        try:
            with open(self.path(key), "rb") as fh:
                meta = json.loads(_read_header(fh)[0]["meta"])
        except Exception:  # unreadable: ``get`` will set it aside when a run asks for it
            return None
        return meta if isinstance(meta, dict) else None

    def remove(self, key: str) -> bool:
        """Delete one entry; True if it existed."""
        try:
            self.path(key).unlink()
        except FileNotFoundError:
            return False
        return True

    def prune(self, keep: Any = None) -> dict[str, int]:
        """Remove stale temp files (older than STALE_TMP_SECONDS), set-aside corrupt entries, entries of
        the first format and the entries for which ``keep(key, meta)`` is false (e.g. produced by code
        that has changed); returns the counts removed by category (legacy entries count as entries)."""
        scan = self.scan()
        removed = {"entries": 0, "temp": 0, "corrupt": 0, "bytes": 0}
        for path, size in scan.legacy:
            if _unlink(path):
                removed["entries"] += 1
                removed["bytes"] += size
        for path in scan.stale_temp:
            removed["temp"] += _unlink(path)
        for path, size in scan.corrupt:
            if _unlink(path):
                removed["corrupt"] += 1
                removed["bytes"] += size
        if keep is not None:
            for key, path, size in scan.entries:
                if not keep(key, self.read_meta(key)) and _unlink(path):
                    removed["entries"] += 1
                    removed["bytes"] += size
        return removed

    # -- helpers --------------------------------------------------------------------------------

    def _shards(self) -> list[Path]:
        try:
            children = list(self.root.iterdir())
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [c for c in children if _SHARD_RE.fullmatch(c.name) and c.is_dir()]

    def _entries(self) -> list[tuple[str, Path]]:
        found = []
        for shard in self._shards():
            for child in shard.glob(f"*{SUFFIX}"):
                key = child.name[: -len(SUFFIX)]
                if _KEY_RE.fullmatch(key) and key[:2] == shard.name:
                    found.append((key, child))
        return found


class NullStore(Store):
    """A store that stores nothing (``--no-cache``): ``get`` misses, ``put`` only validates."""

    def __init__(self, root: str | os.PathLike[str] = "") -> None:
        self.root = Path(root)
        self.puts = 0

    def get(self, key: str) -> tuple[dict[str, np.ndarray], dict] | None:
        """Always ``None`` (the key is still validated, so bugs show up with or without a cache)."""
        _check_key(key)
        return None

    def put(self, key: str, arrays: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
        """Validate like ``Store.put`` but write nothing."""
        _check_key(key)
        _prepare_arrays(arrays)
        _meta_json(meta)

    def keys(self) -> list[str]:
        """Always empty."""
        return []

    def clear(self) -> int:
        """Nothing to clear; never touches ``root`` (which may be a real cache directory)."""
        return 0

    def scan(self) -> StoreScan:
        """Always empty (never looks at ``root``)."""
        return StoreScan()

    def prune(self, keep: Any = None) -> dict[str, int]:
        """Nothing to prune."""
        return {"entries": 0, "temp": 0, "corrupt": 0, "bytes": 0}


# -- validation and encoding -------------------------------------------------------------------


def _check_key(key: str) -> None:
    if not isinstance(key, str):
        raise TypeError(f"store key must be a str, got {type(key).__name__}")
    # fullmatch, not match with "$": "$" would accept a trailing newline.
    if not _KEY_RE.fullmatch(key):
        raise ValueError(f"invalid store key {key!r}: expected 16-64 lowercase hex digits")


def _check_name(name: object) -> str:
    if not isinstance(name, str):
        raise ValueError(f"array name {name!r} must be a str")
    if not name or "/" in name or "\\" in name or "\x00" in name or name.startswith("__"):
        # '/' would nest inside the zip; leading '__' is reserved for __meta__ / __sha256__.
        raise ValueError(
            f"invalid array name {name!r}: must be non-empty, contain no '/', '\\\\' or NUL, "
            "and not start with '__'"
        )
    try:
        name.encode("utf-8")  # the header is UTF-8 JSON: a lone surrogate cannot be stored
    except UnicodeEncodeError:
        raise ValueError(f"invalid array name {name!r}: not encodable as UTF-8") from None
    return name


def _prepare_arrays(arrays: Mapping[str, Any]) -> dict[str, np.ndarray]:
    prepared: dict[str, np.ndarray] = {}
    for name, value in arrays.items():
        _check_name(name)
        array = np.asarray(value)
        if array.dtype.kind not in _NUMERIC_KINDS:
            raise ValueError(
                f"array {name!r} has non-numeric dtype {array.dtype}; only numeric arrays can be stored"
            )
        prepared[name] = array
    return prepared


def _meta_json(meta: Mapping[str, Any]) -> str:
    if not isinstance(meta, Mapping):
        raise TypeError(f"meta must be a dict, got {type(meta).__name__}")
    try:
        return json.dumps(dict(meta), sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"meta is not JSON-serialisable: {exc}") from exc


def _write_entry(fh: Any, arrays: Mapping[str, np.ndarray], meta_json: str) -> None:
    """MAGIC, checksum, header length, header, data (see the module's docstring)."""
    table, chunks, offset = [], [], 0
    for name, array in arrays.items():
        data = np.ascontiguousarray(array).tobytes()
        table.append([name, array.dtype.str, list(array.shape), offset, len(data)])
        pad = -len(data) % _ALIGN
        chunks += [data, b"\0" * pad]
        offset += len(data) + pad
    header = json.dumps({"meta": meta_json, "arrays": table}).encode()
    body = [len(header).to_bytes(8, "little"), header, *chunks]
    digest = hashlib.sha256()
    for part in body:
        digest.update(part)
    fh.write(MAGIC + digest.digest())
    for part in body:
        fh.write(part)


def _read_header(fh: Any) -> tuple[dict[str, Any], int]:
    """The header of an entry and where its data start, from its first bytes (no checksum: for ``read_meta``)."""
    start = fh.read(len(MAGIC) + 40)
    if len(start) < len(MAGIC) + 40 or not start.startswith(MAGIC):
        raise ValueError("not a ratecheck store entry (format 2)")
    size = int.from_bytes(start[-8:], "little")
    header = fh.read(size)
    if len(header) != size:
        raise ValueError("truncated header")
    return json.loads(header), len(start) + size


def _decode(fh: Any) -> tuple[dict[str, np.ndarray], dict]:
    """Load and verify one entry; raise on any inconsistency."""
    raw = bytearray(os.fstat(fh.fileno()).st_size)  # a bytearray: the arrays are writable views of it
    got = fh.readinto(raw)
    head = len(MAGIC) + 32
    if got != len(raw) or len(raw) < head + 8 or not raw.startswith(MAGIC):
        raise ValueError("not a ratecheck store entry (format 2), or truncated")
    if not hmac.compare_digest(hashlib.sha256(memoryview(raw)[head:]).digest(), bytes(raw[len(MAGIC):head])):
        raise ValueError("checksum mismatch")
    size = int.from_bytes(raw[head:head + 8], "little")
    start = head + 8 + size
    header = json.loads(raw[head + 8:start])
    meta = json.loads(header["meta"])
    if not isinstance(meta, dict):
        raise ValueError("meta is not a JSON object")
    arrays = {}
    for name, dtype, shape, offset, nbytes in header["arrays"]:
        _check_name(name)
        if not (isinstance(dtype, str) and _DTYPE_RE.fullmatch(dtype)):
            raise ValueError(f"array {name!r} has a non-numeric dtype {dtype!r}")
        kind = np.dtype(dtype)
        count = math.prod(shape)
        if (kind.kind not in _NUMERIC_KINDS or not all(isinstance(n, int) and n >= 0 for n in shape)
                or count * kind.itemsize != nbytes or not 0 <= offset <= len(raw) - start - nbytes):
            raise ValueError(f"array {name!r}: dtype {dtype}, shape {shape}, bytes {offset}+{nbytes} do not fit")
        arrays[name] = np.frombuffer(raw, dtype=kind, count=count, offset=start + offset).reshape(shape)
    return arrays, meta


# Errors an open may meet that say nothing about the entry and pass when tried again.
_RETRY_ERRNOS = frozenset({errno.EINTR, errno.EAGAIN})
OPEN_ATTEMPTS = 3


def _open_retrying(path: Path) -> Any:
    attempt = 0
    while True:
        try:
            return open(path, "rb")
        except OSError as exc:
            attempt += 1
            if exc.errno not in _RETRY_ERRNOS or attempt >= OPEN_ATTEMPTS:
                raise
            time.sleep(0.01 * attempt)


def _unlink(path: Path) -> bool:
    try:
        if path.is_dir() and not path.is_symlink():  # an unreadable entry set aside was a directory
            shutil.rmtree(path)
        else:
            path.unlink()
    except FileNotFoundError:
        return False
    return True


def _naming(exc: OSError, path: Path) -> OSError:
    """``exc`` as an OSError that names ``path`` (a write error alone does not say where)."""
    if exc.filename is not None:
        return exc
    return type(exc)(exc.errno, exc.strerror or str(exc), str(path))


def _fsync_dir(directory: Path) -> None:
    """Make the rename durable; best effort, and not possible on Windows."""
    if os.name == "nt":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
