"""Sample fields: absent means None, present 0 stays 0 (the library's
parser decides what is present; the binding must not invent zeros)."""

from __future__ import annotations

import dataclasses

import pytest

import pycgstream
from pycgstream import Sample, cpu_percent

pytestmark = pytest.mark.usefixtures("library")

CPU_STAT_NO_CONTROLLER = "usage_usec 5\nuser_usec 3\nsystem_usec 2\nnice_usec 0\n"
CPU_STAT_STREAM = (
    "usage_usec 1234\nuser_usec 1000\nsystem_usec 234\nnice_usec 0\n"
    "nr_periods 0\nnr_throttled 0\nthrottled_usec 0\nnr_bursts 0\nburst_usec 0\n"
    "core_sched.force_idle_usec 7\n"
    "publication_seq 17\npublication_time_usec 123456789\npublications_skipped 0\n")


def test_absent_fields_are_none_not_zero() -> None:
    s = pycgstream.parse(CPU_STAT_NO_CONTROLLER, "/sys/fs/cgroup/a")
    assert s.cgroup == "/sys/fs/cgroup/a"
    assert (s.usage_usec, s.user_usec, s.system_usec, s.nice_usec) == (5, 3, 2, 0)
    for name in ("seq", "flush_time_usec", "nr_periods", "nr_throttled",
                 "throttled_usec", "nr_bursts", "burst_usec", "flush_missed"):
        assert getattr(s, name) is None, name


def test_present_zeros_stay_zero_and_unknown_keys_are_skipped() -> None:
    s = pycgstream.parse(CPU_STAT_STREAM.encode())
    assert s == Sample("", seq=17, flush_time_usec=123456789, usage_usec=1234,
                       user_usec=1000, system_usec=234, nice_usec=0, nr_periods=0,
                       nr_throttled=0, throttled_usec=0, nr_bursts=0, burst_usec=0,
                       flush_missed=0)


def test_parse_error_is_an_oserror() -> None:
    with pytest.raises(OSError):
        pycgstream.parse("usage_usec notanumber\n")


def test_sample_is_frozen_with_slots() -> None:
    s = Sample("/x", usage_usec=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.usage_usec = 2  # type: ignore[misc]
    assert not hasattr(s, "__dict__")


def test_cpu_percent() -> None:
    a = Sample("/x", flush_time_usec=1_000_000, usage_usec=0)
    b = Sample("/x", flush_time_usec=2_000_000, usage_usec=250_000)
    assert cpu_percent(a, b) == 25.0
    assert cpu_percent(a, a) is None
    assert cpu_percent(Sample("/x"), b) is None
