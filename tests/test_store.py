"""Tests for the on-disk run cache (ratecheck.model.store)."""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ratecheck.model import store as store_module
from ratecheck.model.store import NullStore, Store

KEY = "0123456789abcdef" * 4  # 64 hex digits, like a SHA-256
KEY2 = "fedcba9876543210"  # 16 hex digits, the shortest allowed


def sample_arrays() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "measure.loss": rng.standard_normal((5, 7)),
        "counter.rounds": np.arange(11, dtype=np.int64),
        "mask": rng.random((2, 3, 4)) > 0.5,
        "scalar": np.array(3.5),
        "int_scalar": np.int64(-7),
        "empty": np.zeros((0, 3)),
        "f32": np.linspace(0, 1, 4, dtype=np.float32),
        "u8": np.array([0, 255], dtype=np.uint8),
        "cplx": np.array([1 + 2j, -3j]),
        "nan_inf": np.array([np.nan, np.inf, -np.inf, 0.0]),
        "strided": np.arange(20.0).reshape(4, 5)[::2, ::-1],  # non-contiguous view
        "fortran": np.asfortranarray(np.arange(6, dtype=np.int64).reshape(2, 3)),
        "big_endian": np.arange(3, dtype=">f8"),
        "file": np.array([1]),  # would clash with np.savez's own parameter names
        "allow_pickle": np.array([2]),
    }


SAMPLE_META = {
    "config": {"algorithm": "fedavg", "lr": 0.1, "clients": [1, 2, 3], "nested": {"a": None, "b": True}},
    "info": {"note": "ünïcödé ✓", "empty": {}, "list": [[1, 2], [3.5, -1e300]]},
}


def assert_same_arrays(got: dict[str, np.ndarray], want: dict[str, object]) -> None:
    assert set(got) == set(want)
    for name, value in want.items():
        value = np.asarray(value)
        assert got[name].dtype == value.dtype, name
        assert got[name].shape == value.shape, name
        np.testing.assert_array_equal(got[name], value, err_msg=name)


def no_temp_files(root: Path) -> bool:
    return not [p for p in root.rglob("*") if p.name.endswith(".tmp")]


# -- round trip ---------------------------------------------------------------------------------


def test_round_trip_dtypes_shapes_and_nested_meta(tmp_path: Path) -> None:
    store = Store(tmp_path / "cache")
    arrays = sample_arrays()
    store.put(KEY, arrays, SAMPLE_META)
    got = store.get(KEY)
    assert got is not None
    got_arrays, got_meta = got
    assert_same_arrays(got_arrays, arrays)
    assert got_meta == SAMPLE_META
    assert KEY in store
    assert store.keys() == [KEY]
    # A second instance on the same directory sees the entry (it is really on disk).
    again = Store(str(tmp_path / "cache")).get(KEY)
    assert again is not None and again[1] == SAMPLE_META


def test_layout_and_lazy_directory(tmp_path: Path) -> None:
    root = tmp_path / "lazy" / "cache"
    store = Store(root)
    assert not root.exists()  # naming a cache creates nothing
    assert store.get(KEY) is None and KEY not in store and store.keys() == []
    assert not root.exists()
    assert store.path(KEY) == root / KEY[:2] / f"{KEY}.rcs"
    store.put(KEY, {"x": np.arange(2.0)}, {"v": 1})
    assert store.path(KEY).is_file()
    # The documented layout, readable with the standard library and numpy alone.
    raw = store.path(KEY).read_bytes()
    magic = store_module.MAGIC
    assert raw.startswith(magic) and hashlib.sha256(raw[len(magic) + 32:]).digest() == raw[len(magic):len(magic) + 32]
    size = int.from_bytes(raw[len(magic) + 32:len(magic) + 40], "little")
    header = json.loads(raw[len(magic) + 40:len(magic) + 40 + size])
    assert json.loads(header["meta"]) == {"v": 1} and header["arrays"] == [["x", "<f8", [2], 0, 16]]
    start = len(magic) + 40 + size
    np.testing.assert_array_equal(np.frombuffer(raw[start:start + 16], "<f8"), [0.0, 1.0])


def test_empty_arrays_and_overwrite(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.put(KEY, {}, {"v": 1})
    assert store.get(KEY) == ({}, {"v": 1})
    store.put(KEY, {"a": np.arange(3)}, {"v": 2})
    arrays, meta = store.get(KEY)
    assert meta == {"v": 2}
    assert_same_arrays(arrays, {"a": np.arange(3)})
    assert store.keys() == [KEY]


def test_keys_and_clear(tmp_path: Path) -> None:
    store = Store(tmp_path / "c")
    assert store.clear() == 0  # root does not exist yet
    for key in (KEY, KEY2, "ab" * 10):
        store.put(key, {"x": np.zeros(1)}, {})
    foreign = tmp_path / "c" / "notes.txt"
    foreign.write_text("keep me")
    assert store.keys() == sorted([KEY, KEY2, "ab" * 10])
    assert store.clear() == 3
    assert store.keys() == []
    assert foreign.read_text() == "keep me"  # only our own files are deleted
    assert list((tmp_path / "c").iterdir()) == [foreign]
    store.put(KEY, {"x": np.zeros(1)}, {})
    assert KEY in store


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    arrays=st.dictionaries(
        # valid names only (surrogates are refused, tested separately)
        st.text(st.characters(blacklist_characters="/\\\x00", blacklist_categories=("Cs",)), min_size=1,
                max_size=8).filter(
            lambda s: not s.startswith("__")
        ),
        hnp.arrays(
            dtype=st.sampled_from([np.float64, np.int64, np.bool_, np.float32, np.int8]),
            shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
        ),
        max_size=4,
    ),
    meta=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=8,
    ),
)
def test_round_trip_property(arrays: dict[str, np.ndarray], meta: object) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(tmp)
        store.put(KEY, arrays, {"m": meta})
        got = store.get(KEY)
        assert got is not None
        assert_same_arrays(got[0], arrays)
        assert got[1] == {"m": meta}


# -- validation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    ["", "abc", "0123456789abcde", "0123456789ABCDEF", "g123456789abcdef", "a" * 65,
     "../../../etc/passwd", "0123456789abcdef\n", " 0123456789abcdef", "0123456789abcdef.npz"],
)
def test_invalid_keys_rejected(tmp_path: Path, key: str) -> None:
    store = Store(tmp_path)
    for call in (lambda: store.path(key), lambda: store.get(key), lambda: store.put(key, {}, {})):
        with pytest.raises(ValueError, match="invalid store key"):
            call()
    assert key not in store  # membership never raises
    assert list(tmp_path.iterdir()) == []


def test_non_string_key(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with pytest.raises(TypeError):
        store.get(12345678901234567890)  # type: ignore[arg-type]
    assert 12345678901234567890 not in store


@pytest.mark.parametrize(
    "name", ["a/b", "/abs", "__meta__", "__sha256__", "__private", "", "a\\b", "nul\x00"]
)
def test_bad_array_names_rejected(tmp_path: Path, name: str) -> None:
    store = Store(tmp_path)
    with pytest.raises(ValueError, match="invalid array name") as info:
        store.put(KEY, {"ok": np.zeros(1), name: np.zeros(1)}, {})
    assert repr(name) in str(info.value)
    assert store.get(KEY) is None
    assert store.keys() == []


@pytest.mark.parametrize(
    "value", [np.array(["a", "b"]), np.array([object()], dtype=object), np.array([b"x"]),
              np.array(["2020-01-01"], dtype="datetime64[D]")],
)
def test_non_numeric_arrays_rejected(tmp_path: Path, value: np.ndarray) -> None:
    store = Store(tmp_path)
    with pytest.raises(ValueError, match="'bad'"):
        store.put(KEY, {"bad": value}, {})
    assert store.keys() == []


def test_meta_must_be_json(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with pytest.raises(TypeError, match="JSON"):
        store.put(KEY, {}, {"x": object()})
    with pytest.raises(TypeError):
        store.put(KEY, {}, ["not", "a", "dict"])  # type: ignore[arg-type]
    assert store.keys() == [] and no_temp_files(tmp_path)


# -- atomicity ----------------------------------------------------------------------------------


def test_no_temp_files_after_put(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.put(KEY, sample_arrays(), SAMPLE_META)
    assert sorted(p.name for p in store.path(KEY).parent.iterdir()) == [f"{KEY}.rcs"]


@pytest.mark.parametrize("victim", ["replace", "fsync"])
def test_crash_mid_write_leaves_no_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, victim: str
) -> None:
    store = Store(tmp_path)

    def crash(*args: object, **kwargs: object) -> None:
        raise OSError("simulated crash")

    with monkeypatch.context() as patch:
        patch.setattr(store_module.os, victim, crash)
        with pytest.raises(OSError, match="simulated crash"):
            store.put(KEY, {"x": np.arange(3)}, {"v": 1})
    assert store.get(KEY) is None
    assert KEY not in store and store.keys() == []
    assert no_temp_files(tmp_path)
    # The store still works afterwards.
    store.put(KEY, {"x": np.arange(3)}, {"v": 1})
    assert store.get(KEY)[1] == {"v": 1}


def test_crash_while_replacing_keeps_old_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(tmp_path)
    store.put(KEY, {"x": np.arange(3)}, {"v": 1})

    def boom(fh: object, *args: object, **kwargs: object) -> None:
        fh.write(b"half an entry")  # type: ignore[attr-defined]  # a file
        raise RuntimeError("disk full")

    with monkeypatch.context() as patch:
        patch.setattr(store_module, "_write_entry", boom)
        with pytest.raises(RuntimeError, match="disk full"):
            store.put(KEY, {"x": np.arange(5)}, {"v": 2})
    arrays, meta = store.get(KEY)
    assert meta == {"v": 1}
    assert_same_arrays(arrays, {"x": np.arange(3)})
    assert no_temp_files(tmp_path)


def test_concurrent_writers_same_key(tmp_path: Path) -> None:
    store = Store(tmp_path)
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for round_ in range(5):
                value = n * 100 + round_
                store.put(KEY, {"x": np.full(20_000, value, dtype=np.int64)}, {"value": value})
                got = Store(tmp_path).get(KEY)  # readers never see a partial file
                assert got is not None
                assert np.all(got[0]["x"] == got[1]["value"])
        except BaseException as exc:  # collected: assertion errors in threads would be lost
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    arrays, meta = store.get(KEY)
    assert np.all(arrays["x"] == meta["value"])  # last writer wins, consistently
    assert no_temp_files(tmp_path)
    assert store.keys() == [KEY]


# -- corruption ---------------------------------------------------------------------------------


def _payload_offset(raw: bytes, array: np.ndarray) -> int:
    offset = raw.find(array.tobytes())
    assert offset > 0
    return offset + array.nbytes // 2


def _truncate(raw: bytes, array: np.ndarray) -> bytes:
    return raw[: len(raw) // 2]


def _flip_payload_byte(raw: bytes, array: np.ndarray) -> bytes:
    data = bytearray(raw)
    data[_payload_offset(raw, array)] ^= 0x01
    return bytes(data)


def _garbage(raw: bytes, array: np.ndarray) -> bytes:
    return b"this is not an npz file at all" * 10


def _empty(raw: bytes, array: np.ndarray) -> bytes:
    return b""


def _forged(arrays: dict[str, np.ndarray] | None = None, meta: str = "{}", table: list | None = None,
            data: bytes = b"") -> bytes:
    """An entry whose checksum holds (forged or rebuilt after a change): only the layout checks can refuse it."""
    if table is None:
        buf = io.BytesIO()
        store_module._write_entry(buf, arrays or {}, meta)
        return buf.getvalue()
    body = [b"", json.dumps({"meta": meta, "arrays": table}).encode(), data]
    body[0] = len(body[1]).to_bytes(8, "little")
    return store_module.MAGIC + hashlib.sha256(b"".join(body)).digest() + b"".join(body)


def _valid_checksum_bad_payload(raw: bytes, array: np.ndarray) -> bytes:
    """Change an array's bytes and recompute nothing: the checksum notices."""
    return raw.replace(array.tobytes(), (array + 1).tobytes())


def _tampered_meta(raw: bytes, array: np.ndarray) -> bytes:
    return raw.replace(b'{\\"v\\": 1}', b'{\\"v\\": 6}')


def _first_format(raw: bytes, array: np.ndarray) -> bytes:
    """An entry of the first format (an npz) where an entry goes: not ours to read."""
    buf = io.BytesIO()
    np.savez(buf, x=array, __meta__=np.array("{}"), __sha256__=np.array("0" * 64))
    return buf.getvalue()


def _pickled_object_array(raw: bytes, array: np.ndarray) -> bytes:
    # A malicious entry with a pickled object array must be rejected, never unpickled.
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=True, x=np.array([{"evil": 1}], dtype=object), __meta__=np.array("{}"))
    return buf.getvalue()


def _object_dtype_with_a_good_checksum(raw: bytes, array: np.ndarray) -> bytes:
    return _forged(table=[["x", "|O", [1], 0, 8]], data=b"\0" * 8)


def _shape_beyond_the_data(raw: bytes, array: np.ndarray) -> bytes:
    # a huge shape claimed with a good checksum must be refused before anything is allocated
    return _forged(table=[["x", "<f8", [10**12], 0, 8 * 10**12]], data=b"\0" * 8)


def _meta_not_an_object(raw: bytes, array: np.ndarray) -> bytes:
    return _forged({"x": array}, meta="[1, 2]")


@pytest.mark.parametrize(
    "damage",
    [_truncate, _flip_payload_byte, _garbage, _empty, _valid_checksum_bad_payload, _tampered_meta,
     _first_format, _pickled_object_array, _object_dtype_with_a_good_checksum, _shape_beyond_the_data,
     _meta_not_an_object],
)
def test_corruption_detected(tmp_path: Path, caplog: pytest.LogCaptureFixture, damage) -> None:
    store = Store(tmp_path)
    array = np.arange(1000, dtype=np.float64) * 1.5
    store.put(KEY, {"x": array, "n": np.arange(4)}, {"v": 1})
    path = store.path(KEY)
    path.write_bytes(damage(path.read_bytes(), array))

    with caplog.at_level(logging.WARNING, logger="ratecheck.model.store"):
        assert store.get(KEY) is None
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings and KEY in warnings[0].getMessage()
    # Moved aside: gone from the cache, kept for inspection.
    assert not path.exists()
    assert path.with_name(path.name + ".corrupt").exists()
    assert KEY not in store and store.keys() == []
    # Recompute and store again.
    store.put(KEY, {"x": array}, {"v": 2})
    arrays, meta = store.get(KEY)
    assert meta == {"v": 2}
    np.testing.assert_array_equal(arrays["x"], array)
    assert store.clear() == 1
    assert not path.with_name(path.name + ".corrupt").exists()


def test_contains_detects_corruption(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = Store(tmp_path)
    store.put(KEY, {"x": np.arange(10.0)}, {})
    store.path(KEY).write_bytes(b"junk")
    with caplog.at_level(logging.WARNING, logger="ratecheck.model.store"):
        assert KEY not in store
    assert KEY in caplog.text


# -- NullStore ----------------------------------------------------------------------------------


def test_null_store(tmp_path: Path) -> None:
    root = tmp_path / "never"
    null = NullStore(root)
    null.put(KEY, {"x": np.ones(3)}, {"v": 1})
    assert null.get(KEY) is None
    assert KEY not in null
    assert null.keys() == []
    assert null.clear() == 0
    assert not root.exists()
    assert isinstance(NullStore(), Store)
    NullStore("").put(KEY, {}, {})


def test_null_store_validates_and_never_deletes(tmp_path: Path) -> None:
    real = Store(tmp_path)
    real.put(KEY, {"x": np.ones(3)}, {})
    null = NullStore(tmp_path)  # pointed at a real cache, e.g. --no-cache with --cache-dir
    assert null.get(KEY) is None
    assert null.clear() == 0
    assert KEY in real  # untouched
    with pytest.raises(ValueError, match="invalid store key"):
        null.get("XYZ")
    with pytest.raises(ValueError, match="invalid array name"):
        null.put(KEY, {"a/b": np.ones(1)}, {})
    assert os.listdir(tmp_path) == [KEY[:2]]


def test_names_that_are_not_utf8_are_refused(tmp_path):
    with pytest.raises(ValueError, match="not encodable as UTF-8"):
        Store(tmp_path).put("ab" * 8, {"\ud800": np.zeros(1)}, {})


# -- issue #7: housekeeping (scan / prune) and runs keyed on their code ------------------------------


def test_scan_and_prune_sort_entries_temp_and_corrupt_files(tmp_path):
    import os
    import time

    from ratecheck.model.store import STALE_TMP_SECONDS, Store

    store = Store(tmp_path)
    keep, drop = "a" * 64, "b" * 64
    store.put(keep, {"x": np.arange(3.0)}, {"ok": True})
    store.put(drop, {"x": np.arange(3.0)}, {"ok": False})
    old = tmp_path / "aa" / f".{keep}.x1.tmp"
    old.write_bytes(b"half")
    past = time.time() - 2 * STALE_TMP_SECONDS
    os.utime(old, (past, past))
    fresh = tmp_path / "aa" / f".{keep}.x2.tmp"  # a writer may still be busy with it
    fresh.write_bytes(b"half")
    corrupt = tmp_path / "cc" / ("c" * 64 + ".npz.corrupt")
    corrupt.parent.mkdir()
    corrupt.write_bytes(b"junk")
    scan = store.scan()
    assert [k for k, _, _ in scan.entries] == [keep, drop]
    assert len(scan.temp) == 2 and scan.stale_temp == [old] and len(scan.corrupt) == 1
    assert store.read_meta(drop) == {"ok": False}
    removed = store.prune(keep=lambda key, meta: meta["ok"])
    assert (removed["entries"], removed["temp"], removed["corrupt"]) == (1, 1, 1)
    assert store.keys() == [keep] and fresh.exists() and not old.exists() and not corrupt.exists()


def test_a_file_is_not_a_cache_directory(tmp_path):
    from ratecheck.model.store import Store

    path = tmp_path / "file"
    path.write_text("x")
    with pytest.raises(NotADirectoryError, match="not a directory"):
        Store(path)


def test_cache_key_follows_the_code_of_the_algorithm_problem_and_engine(monkeypatch):
    import ratecheck.runner.identity as identity
    from ratecheck.trace import RunConfig

    config = RunConfig("fess_gda", {}, "minimax", {}, 5)
    other = RunConfig("fedavg", {}, "quadratic", {}, 5)
    code = identity.code_identity(config)
    assert "ratecheck.algorithms.minimax" in code["modules"] and "ratecheck.problems.minimax" in code["modules"]
    assert "ratecheck.simulate.engine" in code["modules"] and "ratecheck.algorithms.minimax" not in identity.code_identity(
        other)["modules"]
    before, before_other = identity.stored_key(config), identity.stored_key(other)
    real = identity.module_digest

    def edited(name):  # as if someone had edited the minimax algorithms
        return "edited" if name == "ratecheck.algorithms.minimax" else real(name)

    monkeypatch.setattr(identity, "module_digest", edited)
    identity._identity.cache_clear()
    try:
        assert identity.stored_key(config) != before  # the edit invalidates the runs it affects...
        assert identity.stored_key(other) == before_other  # ...and only those
        assert config.key() == RunConfig("fess_gda", {}, "minimax", {}, 5).key()  # the run itself is the same
    finally:
        monkeypatch.undo()
        identity._identity.cache_clear()
    assert identity.stored_key(config) == before


def test_a_test_double_swapped_into_the_registry_gets_its_own_cache_key(monkeypatch):
    from dataclasses import dataclass

    import ratecheck.algorithms.base as base
    from ratecheck.algorithms.fedavg import FedAvg
    from ratecheck.runner.identity import stored_key
    from ratecheck.trace import RunConfig

    @dataclass(frozen=True)
    class Broken(FedAvg):  # e.g. a sensitivity test's deliberately wrong variant
        pass

    @dataclass(frozen=True)
    class AlsoBroken(FedAvg):  # another one, in the same module
        pass

    config = RunConfig("fedavg", {}, "quadratic", {}, 5)
    before = stored_key(config)
    monkeypatch.setitem(base.REGISTRY, "fedavg", Broken)
    broken = stored_key(config)
    monkeypatch.setitem(base.REGISTRY, "fedavg", AlsoBroken)
    assert len({before, broken, stored_key(config)}) == 3


def test_entries_of_the_first_format_are_never_read_and_pruned(tmp_path):
    """A cache written before the format changed (issue #19): its ``<key>.npz`` files are listed as legacy,
    never read (the keys cover the store's code, so they are stale), and removed by prune and clear."""
    store = Store(tmp_path)
    store.put(KEY, {"x": np.arange(3.0)}, {"v": 1})
    old = tmp_path / KEY2[:2] / f"{KEY2}.npz"
    old.parent.mkdir()
    np.savez(old, x=np.arange(3.0))
    assert store.get(KEY2) is None and old.exists()  # not read, not set aside as corrupt
    scan = store.scan()
    assert [k for k, _, _ in scan.entries] == [KEY] and [p for p, _ in scan.legacy] == [old]
    assert store.prune(keep=lambda key, meta: True)["entries"] == 1 and not old.exists()
    np.savez(old, x=np.arange(3.0))
    assert store.clear() == 1 and not old.exists() and store.keys() == []


def test_parsed_imports_kept_in_the_store_give_the_same_keys_without_parsing(tmp_path, monkeypatch):
    """Issue #19: the import graph's parse of each source is a store record by the file's digest; a process
    that reads it computes the same run key and parses no module."""
    import ast

    import ratecheck.runner.identity as identity
    from ratecheck.trace import RunConfig

    def forget() -> None:
        for cached in (identity._imports, identity._closure, identity._identity, identity._modules_digest):
            cached.cache_clear()

    config = RunConfig("fess_gda", {}, "minimax", {}, 5)
    store = Store(tmp_path)
    monkeypatch.setattr(identity, "PARSED", {})
    monkeypatch.setattr(identity, "_HELD", {})
    forget()
    try:
        key = identity.stored_key(config)
        identity.keep_parsed_imports(store, save=True)
        assert set(store.get(identity.PARSED_KEY)[1]["parsed_imports"]) == set(identity.PARSED)
        monkeypatch.setattr(identity, "PARSED", {})
        forget()
        identity.keep_parsed_imports(store)
        monkeypatch.setattr(ast, "parse", lambda *a, **k: pytest.fail("parsed a module"))
        assert identity.stored_key(config) == key
    finally:
        monkeypatch.undo()
        forget()
