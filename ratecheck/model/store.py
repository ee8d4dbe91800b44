"""On-disk cache of finished runs: one pickle-free ``.npz`` file per key.

Layout: ``<root>/<key[:2]>/<key>.npz``. Each file is a standard NumPy ``.npz`` archive holding the
run's numeric arrays plus two reserved members:

* ``__meta__``   -- the run's metadata as a JSON string (0-d unicode array),
* ``__sha256__`` -- a SHA-256 over the array names, dtypes, shapes and bytes and the meta JSON.

Writes are atomic (temp file in the same directory, flush + fsync, ``os.replace``), so a reader sees
either the old entry or the new one, never a half-written file, and concurrent writers of one key
simply race to be the last one (every version they write is complete). A crash leaves at most a
hidden ``.<key>.*.tmp`` file, which ``keys`` ignores and ``clear`` removes.

An entry that fails to decode, whose checksum does not match, or that cannot be opened because of
the entry itself (a directory in its place, no permission) is reported as absent (``get`` returns
``None``), logged as a warning, and renamed aside to ``<key>.npz.corrupt`` so the run is recomputed
while the bad bytes stay available for inspection. An error of the machine rather than the entry (too
many open files, an I/O error while reading) is raised naming the file, after retrying an interrupted
open: the entry stays, and the next run reads it.

Nothing is ever pickled: arrays are written with ``allow_pickle=False`` and read with
``np.load(..., allow_pickle=False)``, so opening a cache file cannot execute code.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import logging
import os
import re
import shutil
import tempfile
import time
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["NullStore", "Store", "StoreScan"]

logger = logging.getLogger(__name__)

_KEY_RE = re.compile(r"[0-9a-f]{16,64}")
_SHARD_RE = re.compile(r"[0-9a-f]{2}")
_META = "__meta__"
_CHECKSUM = "__sha256__"
# Part of the checksummed text: a future change of layout makes old entries fail the check and get
# recomputed instead of being misread.
_FORMAT = b"ratecheck.model.store/1\n"
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
        return self.root / key[:2] / f"{key}.npz"

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
        """Move an unreadable entry aside to ``<key>.npz.corrupt`` (``stat``: the file that was read,
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
        digest = _digest(members, meta_json)
        members[_META] = np.array(meta_json)
        members[_CHECKSUM] = np.array(digest)

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
                _write_npz(fh, members)
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
                is_entry = name == f"{stem}.npz"
                if is_entry or name == f"{stem}.npz.corrupt" or (
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
                if name.endswith(".npz") and _KEY_RE.fullmatch(name[:-4]) and name[:2] == shard.name:
                    out.entries.append((name[:-4], child, st.st_size))
                elif name.endswith(".npz.corrupt") and _KEY_RE.fullmatch(name[: -len(".npz.corrupt")]):
                    out.corrupt.append((child, st.st_size))
                elif name.startswith(".") and name.endswith(".tmp") and _KEY_RE.fullmatch(name[1:].split(".")[0]):
                    out.temp.append((child, now - st.st_mtime))
        out.entries.sort()
        return out

    def read_meta(self, key: str) -> dict | None:
        """An entry's metadata without loading or verifying its arrays (None if unreadable)."""
        try:
            with np.load(self.path(key), allow_pickle=False) as npz:
                meta = json.loads(str(npz[_META][()]))
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
        """Remove stale temp files (older than STALE_TMP_SECONDS), set-aside corrupt entries and the
        entries for which ``keep(key, meta)`` is false (e.g. produced by code that has changed);
        returns the counts removed by category."""
        scan = self.scan()
        removed = {"entries": 0, "temp": 0, "corrupt": 0, "bytes": 0}
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
            for child in shard.glob("*.npz"):
                key = child.name[: -len(".npz")]
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
        name.encode("utf-8")  # zip member names are UTF-8: a lone surrogate cannot be stored
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


def _digest(arrays: Mapping[str, np.ndarray], meta_json: str) -> str:
    """SHA-256 over names, dtypes, shapes, bytes (in name order) and the meta JSON."""
    h = hashlib.sha256(_FORMAT)
    for name in sorted(arrays):
        array = arrays[name]
        # Length-prefixed fields so that no two different entries hash the same byte stream.
        header = json.dumps([name, array.dtype.str, list(array.shape)]).encode()
        h.update(len(header).to_bytes(8, "little"))
        h.update(header)
        data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        h.update(data.size.to_bytes(8, "little"))
        h.update(data.data)
    meta = meta_json.encode()
    h.update(len(meta).to_bytes(8, "little"))
    h.update(meta)
    return h.hexdigest()


def _write_npz(fh: Any, members: Mapping[str, np.ndarray]) -> None:
    # This is exactly what np.savez does (uncompressed zip of .npy members), written out because
    # np.savez's own parameters ("file", "allow_pickle") would collide with arrays of those names.
    with zipfile.ZipFile(fh, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, array in members.items():
            with zf.open(name + ".npy", mode="w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def _decode(fh: Any) -> tuple[dict[str, np.ndarray], dict]:
    """Load and verify one entry; raise on any inconsistency."""
    with np.load(fh, allow_pickle=False) as npz:
        # Check every member's zip CRC before numpy parses headers: a flipped bit in a header could
        # otherwise claim a huge shape and make numpy allocate it.
        bad = npz.zip.testzip()
        if bad is not None:
            raise ValueError(f"CRC mismatch in member {bad!r}")
        names = list(npz.files)
        if _META not in names or _CHECKSUM not in names:
            raise ValueError("missing metadata or checksum")
        meta_json = str(npz[_META][()])
        stored = str(npz[_CHECKSUM][()])
        arrays = {name: npz[name] for name in names if name not in (_META, _CHECKSUM)}
    for name, array in arrays.items():
        _check_name(name)
        if array.dtype.kind not in _NUMERIC_KINDS:
            raise ValueError(f"array {name!r} has non-numeric dtype {array.dtype}")
    if not hmac.compare_digest(_digest(arrays, meta_json), stored):
        raise ValueError("checksum mismatch")
    meta = json.loads(meta_json)
    if not isinstance(meta, dict):
        raise ValueError("meta is not a JSON object")
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
