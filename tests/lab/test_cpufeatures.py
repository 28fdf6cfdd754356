"""CPU flags read from /proc/cpuinfo, and the hashing departure they cause."""

from pathlib import Path

from stackbench.config.deviations import hashing_deviation
from stackbench.config.suite import parse_suite
from stackbench.lab.cpufeatures import cpu_flags, crypto_flags, with_machine_deviations

SUITES = Path(__file__).resolve().parents[2] / "suites"

X86 = """processor\t: 0
vendor_id\t: AuthenticAMD
flags\t\t: fpu vme sse2 aes sha_ni avx2
bugs\t\t: sysret_ss_attrs

processor\t: 1
flags\t\t: fpu
"""
ARM = "processor\t: 0\nFeatures\t: fp asimd aes pmull sha1 sha2 crc32\n"


def test_flags_of_the_first_processor_on_x86_and_arm() -> None:
    assert cpu_flags(X86) == frozenset({"fpu", "vme", "sse2", "aes", "sha_ni", "avx2"})
    assert {"sha2", "aes", "pmull"} <= cpu_flags(ARM)
    assert cpu_flags("processor : 0\n") == frozenset()


def test_crypto_flags_name_only_hash_and_aes_instructions() -> None:
    assert crypto_flags(cpu_flags(X86)) == "aes, sha_ni"
    assert crypto_flags(frozenset({"fpu"})) == "none"


def test_a_hashing_suite_on_a_cpu_with_sha_instructions_states_it() -> None:
    line = hashing_deviation(["sha256", "hello"], frozenset({"sha_ni"}))
    assert line is not None
    assert "sha_ni" in line.ours and "PHP 8.2" in line.ours
    assert hashing_deviation(["hello"], frozenset({"sha_ni"})) is None
    assert hashing_deviation(["sha256"], frozenset({"aes"})) is None


def test_io_vs_cpu_gains_the_line_and_quick_does_not() -> None:
    article = with_machine_deviations(parse_suite(SUITES / "io-vs-cpu.toml"), frozenset({"sha_ni"}))
    assert [d.setting for d in article.deviations][-1] == "CPU SHA-256 instructions"
    plain = with_machine_deviations(parse_suite(SUITES / "io-vs-cpu.toml"), frozenset())
    assert "CPU SHA-256 instructions" not in [d.setting for d in plain.deviations]
    # quick hashes too, but reproduces no article: it has nothing to depart from.
    quick = parse_suite(SUITES / "quick.toml")
    assert with_machine_deviations(quick, frozenset({"sha_ni"})) == quick
