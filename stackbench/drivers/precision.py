"""Figures read at the precision the load tools print them.

ab prints the elapsed time to the millisecond ("Time taken for tests: 0.277 seconds") and wrk
to two decimals of its unit ("405200 requests in 1.00m": ±0.3 s), but both print the request
rate from the unrounded time to five or more significant digits. So completed / rate is the
elapsed time the tool measured, to more digits than it printed, and the figures we derive
from it (times per request, transfer rates) match the tool's own three-decimal lines.
"""


def precise_duration(printed_s: float, resolution_s: float, completed: int, rps: float) -> float:
    """completed / rps when it agrees with the printed duration to within the printed
    rounding (`resolution_s`: half its last digit); otherwise the printed duration."""
    if completed <= 0 or rps <= 0:
        return printed_s
    implied = completed / rps
    return implied if abs(implied - printed_s) <= resolution_s * 1.2 else printed_s
