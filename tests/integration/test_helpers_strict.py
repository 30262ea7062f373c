# SPDX-License-Identifier: Apache-2.0
"""The test helpers fail instead of filtering (issue 7, defect 16): a record parser that
skipped a bad CRC, or a raw fetch that dropped records the broker should never have served,
would hide exactly the bugs the data tests exist to catch. No broker needed."""
import contextlib

import pytest

import harness
import kproto


def test_record_parser_raises_on_bad_crc():
    batch = bytearray(kproto.record_batch([(b"k", b"value-1"), (b"k", b"value-2")]))
    assert [r[3] for r in kproto.records_of(bytes(batch))] == [b"value-1", b"value-2"]
    batch[-3] ^= 0x01  # inside the last record's value, covered by the CRC
    with pytest.raises(ValueError, match="CRC"):
        kproto.records_of(bytes(batch))
    with pytest.raises(ValueError, match="CRC"):
        kproto.parse_record_batches(bytes(batch))
    (bt,) = kproto.parse_record_batches(bytes(batch), check_crc=False)
    assert bt["crc_ok"] is False and bt["records"] is None


def test_record_parser_raises_on_impossible_batch_length():
    batch = bytearray(kproto.record_batch([(None, b"v")]))
    batch[8:12] = kproto.i32(20)
    with pytest.raises(ValueError, match="length"):
        kproto.parse_record_batches(bytes(batch) + b"\0" * 64)


def test_record_parser_keeps_a_partial_trailing_batch_out():
    one = kproto.record_batch([(None, b"a")])
    two = kproto.record_batch([(None, b"b")], base_offset=1)
    assert [r[3] for r in kproto.records_of(one + two[:30])] == [b"a"]


class _FakeConn:
    """Answers every fetch with the same records and high watermark."""

    def __init__(self, records, hw):
        self.records, self.hw = records, hw

    def fetch(self, topics, **_kw):
        (topic, parts), = topics.items()
        (p, _off), = parts.items()
        return {"partitions": {(topic, p): {"error": 0, "hw": self.hw,
                                            "records": self.records}}}


class _FakeBroker:
    def __init__(self, records, hw):
        self.c = _FakeConn(records, hw)

    def conn(self):
        return contextlib.nullcontext(self.c)


def test_fetch_all_raw_fails_on_records_past_the_high_watermark():
    data = kproto.record_batch([(None, b"a"), (None, b"b"), (None, b"c")])
    assert [r[3] for r in harness.fetch_all_raw(_FakeBroker(data, 3), "t", 0)] == \
        [b"a", b"b", b"c"]
    with pytest.raises(AssertionError, match="past hw"):
        harness.fetch_all_raw(_FakeBroker(data, 2), "t", 0)
