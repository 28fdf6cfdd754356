"""The stack palette under simulated colour-vision deficiency: every two stacks' colours stay
distinguishable for a protanope, a deuteranope and a tritanope, not only for normal vision.

Simulation: Machado, Oliveira & Fernandes (2009), severity 1.0 (dichromacy), applied in linear
RGB; distance: CIEDE2000 in CIELAB (D65). A ΔE00 of about 2 is just noticeable side by side;
10 keeps two thin lines on a white page apart at a glance. The previous palette failed this
(blue and violet 0.5 apart for a deuteranope).
"""

import itertools
import math

import pytest

from stackbench.report.colors import LINESTYLES, MARKERS, PALETTE, stack_style

MIN_DELTA_E = 10.0
MACHADO = {
    "protanopia": (
        (0.152286, 1.052583, -0.204868),
        (0.114503, 0.786281, 0.099216),
        (-0.003882, -0.048116, 1.051998),
    ),
    "deuteranopia": (
        (0.367322, 0.860646, -0.227968),
        (0.280085, 0.672501, 0.047413),
        (-0.011820, 0.042940, 0.968881),
    ),
    "tritanopia": (
        (1.255528, -0.076749, -0.178779),
        (-0.078411, 0.930809, 0.147602),
        (0.004733, 0.691367, 0.303900),
    ),
    "normal vision": ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)),
}
SRGB_TO_XYZ = ((0.4124, 0.3576, 0.1805), (0.2126, 0.7152, 0.0722), (0.0193, 0.1192, 0.9505))
WHITE = (0.95047, 1.0, 1.08883)

Vec = tuple[float, float, float]


def _mul(m: tuple[Vec, Vec, Vec], v: Vec) -> Vec:
    x, y, z = (sum(a * b for a, b in zip(row, v, strict=True)) for row in m)
    return x, y, z


def _linear(hex_color: str) -> Vec:
    def one(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (one(int(hex_color[i : i + 2], 16) / 255) for i in (1, 3, 5))
    return r, g, b


def _lab(linear_rgb: Vec) -> Vec:
    clipped = tuple(min(1.0, max(0.0, c)) for c in linear_rgb)
    xyz = _mul(SRGB_TO_XYZ, clipped)  # type: ignore[arg-type]
    f = [
        t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116
        for t in (v / w for v, w in zip(xyz, WHITE, strict=True))
    ]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def simulate(hex_color: str, kind: str) -> Vec:
    """CIELAB of the colour as seen with the deficiency `kind`."""
    return _lab(_mul(MACHADO[kind], _linear(hex_color)))  # type: ignore[arg-type]


def delta_e2000(lab1: Vec, lab2: Vec) -> float:
    """CIEDE2000 (Sharma, Wu & Dalal 2005)."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_bar = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_bar**7 / (c_bar**7 + 25**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360
    h2p = math.degrees(math.atan2(b2, a2p)) % 360
    dh = 0.0 if c1p * c2p == 0 else (h2p - h1p + 180) % 360 - 180
    d_big_h = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh / 2))
    l_bar, cp_bar = (l1 + l2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        h_bar = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        h_bar = (h1p + h2p) / 2
    else:
        h_bar = (h1p + h2p + (360 if h1p + h2p < 360 else -360)) / 2
    t = (
        1
        - 0.17 * math.cos(math.radians(h_bar - 30))
        + 0.24 * math.cos(math.radians(2 * h_bar))
        + 0.32 * math.cos(math.radians(3 * h_bar + 6))
        - 0.20 * math.cos(math.radians(4 * h_bar - 63))
    )
    theta = 30 * math.exp(-(((h_bar - 275) / 25) ** 2))
    r_c = 2 * math.sqrt(cp_bar**7 / (cp_bar**7 + 25**7))
    s_l = 1 + 0.015 * (l_bar - 50) ** 2 / math.sqrt(20 + (l_bar - 50) ** 2)
    s_c, s_h = 1 + 0.045 * cp_bar, 1 + 0.015 * cp_bar * t
    r_t = -math.sin(math.radians(2 * theta)) * r_c
    dl, dc, dh2 = (l2 - l1) / s_l, (c2p - c1p) / s_c, d_big_h / s_h
    return math.sqrt(dl**2 + dc**2 + dh2**2 + r_t * dc * dh2)


def test_delta_e2000_matches_the_published_test_data():
    # Sharma, Wu & Dalal (2005), table 1, pairs 1 and 7
    assert delta_e2000((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485)) == pytest.approx(
        2.0425, abs=1e-4
    )
    assert delta_e2000((50.0, 0.0, 0.0), (50.0, -1.0, 2.0)) == pytest.approx(2.3669, abs=1e-4)


def test_the_simulation_merges_what_a_deuteranope_cannot_tell_apart():
    # red and green of equal luminance for a deuteranope: far apart for normal vision only
    red, green = "#b35a00", "#6e7a00"
    assert delta_e2000(simulate(red, "normal vision"), simulate(green, "normal vision")) > 15
    assert delta_e2000(simulate(red, "deuteranopia"), simulate(green, "deuteranopia")) < 8


@pytest.mark.parametrize("kind", list(MACHADO))
def test_every_two_stack_colours_stay_apart(kind):
    closest = min(
        (delta_e2000(simulate(a, kind), simulate(b, kind)), a, b)
        for a, b in itertools.combinations(PALETTE, 2)
    )
    assert closest[0] >= MIN_DELTA_E, f"{kind}: {closest[1]} and {closest[2]} look alike"


def test_colour_is_never_the_only_cue():
    stacks = [f"s{i}" for i in range(len(PALETTE) + 2)]
    looks = [stack_style(stacks, s) for s in stacks]
    # stacks that share a colour (beyond the palette) differ by their marker
    assert len({(s.color, s.marker) for s in looks}) == len(stacks)
    assert len(MARKERS) >= len(PALETTE) + 2 and len(set(LINESTYLES)) == len(LINESTYLES)
    assert stack_style(stacks, "not in the run").color not in PALETTE
