//! Property tests of the HTTP response parser (`http::replay` drives it as the worker's read
//! loop does). Arbitrary and mutated input must never panic and must parse the same however the
//! socket splits it; generated valid responses (Content-Length, chunked with extensions and
//! trailers, until-close, interim 1xx, no-body statuses, HEAD, pipelined) must parse to exactly
//! what was generated, split at every byte boundary.

use proptest::prelude::*;
use stackbench_load::http::{replay, Replay, Replayed};

/// How a generated response frames its body.
#[derive(Clone, Debug)]
enum Framing {
    Length,
    /// Chunk sizes (the body is cut into these), with a `;ext` on some, and trailer lines.
    Chunked {
        cuts: Vec<usize>,
        ext: bool,
        trailers: Vec<String>,
    },
    /// No length: the body runs until the server closes (only as the last response).
    UntilClose,
}

#[derive(Clone, Debug)]
struct Response {
    interim: bool,
    http10: bool,
    status: u16,
    connection: Option<&'static str>,
    headers: Vec<(String, String)>,
    framing: Framing,
    body: Vec<u8>,
    /// Hex digits of chunk sizes in upper case, lengths with leading zeros.
    upper_hex: bool,
}

fn token() -> impl Strategy<Value = String> {
    "[A-Za-z][A-Za-z0-9-]{0,11}".prop_filter("not a framing header", |name| {
        let name = name.to_ascii_lowercase();
        !["content-length", "transfer-encoding", "connection"].contains(&name.as_str())
    })
}

fn framing() -> impl Strategy<Value = Framing> {
    prop_oneof![
        3 => Just(Framing::Length),
        3 => (
            prop::collection::vec(1usize..40, 0..5),
            any::<bool>(),
            prop::collection::vec("[A-Za-z]{1,8}: [ -~]{0,16}", 0..3),
        )
            .prop_map(|(cuts, ext, trailers)| Framing::Chunked { cuts, ext, trailers }),
        1 => Just(Framing::UntilClose),
    ]
}

fn response() -> impl Strategy<Value = Response> {
    (
        any::<bool>(),
        prop::bool::weighted(0.15),
        prop::sample::select(vec![200u16, 201, 204, 301, 304, 404, 500, 503]),
        prop::sample::select(vec![
            None,
            Some("close"),
            Some("keep-alive"),
            Some("Keep-Alive, x"),
        ]),
        prop::collection::vec((token(), "[ -~]{0,24}"), 0..4),
        framing(),
        prop::collection::vec(any::<u8>(), 0..120),
        any::<bool>(),
    )
        .prop_map(
            |(interim, http10, status, connection, headers, framing, body, upper_hex)| Response {
                interim,
                http10,
                status,
                connection,
                headers,
                framing,
                body,
                upper_hex,
            },
        )
}

/// A response sequence as one byte stream plus what parsing it must give.
fn render(responses: &[Response], head_request: bool) -> (Vec<u8>, Vec<Replayed>) {
    let mut out = Vec::new();
    let mut expected = Vec::new();
    for (i, r) in responses.iter().enumerate() {
        let last = i + 1 == responses.len();
        // Until-close framing is only possible last; earlier ones use Content-Length instead.
        let until_close = matches!(r.framing, Framing::UntilClose) && last;
        let no_body = head_request || r.status == 204 || r.status == 304;
        let version = if r.http10 { "1.0" } else { "1.1" };
        if r.interim && !r.http10 {
            out.extend_from_slice(b"HTTP/1.1 100 Continue\r\nX-Interim: 1\r\n\r\n");
        }
        out.extend_from_slice(format!("HTTP/{version} {} Reason Phrase\r\n", r.status).as_bytes());
        for (name, value) in &r.headers {
            out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        if let Some(connection) = r.connection {
            out.extend_from_slice(format!("Connection: {connection}\r\n").as_bytes());
        }
        let chunked = matches!(r.framing, Framing::Chunked { .. });
        if chunked {
            out.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
        } else if !until_close {
            let width = if r.upper_hex { 4 } else { 0 };
            out.extend_from_slice(
                format!("Content-Length: {:0width$}\r\n", r.body.len()).as_bytes(),
            );
        }
        out.extend_from_slice(b"\r\n");
        let body: &[u8] = if no_body { b"" } else { &r.body };
        if !no_body {
            match &r.framing {
                Framing::Chunked {
                    cuts,
                    ext,
                    trailers,
                } => render_chunks(&mut out, body, cuts, *ext, trailers, r.upper_hex),
                _ => out.extend_from_slice(body),
            }
        }
        let keep_alive = r.connection.is_some_and(|c| c.contains("eep-"));
        let close_header = r.connection == Some("close");
        expected.push(Replayed {
            status: r.status,
            close: close_header || (r.http10 && !keep_alive) || (until_close && !no_body),
            body: body.to_vec(),
        });
        if until_close && !no_body {
            break; // nothing can follow a body that ends at the close
        }
    }
    (out, expected)
}

fn render_chunks(
    out: &mut Vec<u8>,
    body: &[u8],
    cuts: &[usize],
    ext: bool,
    trailers: &[String],
    upper_hex: bool,
) {
    let mut rest = body;
    let mut sizes = cuts.iter().cycle();
    while !rest.is_empty() {
        let size = sizes.next().copied().unwrap_or(rest.len()).min(rest.len());
        let hex = if upper_hex {
            format!("{size:X}")
        } else {
            format!("{size:x}")
        };
        let extension = if ext { ";name=\"va;lue\"" } else { "" };
        out.extend_from_slice(format!("{hex}{extension}\r\n").as_bytes());
        out.extend_from_slice(&rest[..size]);
        out.extend_from_slice(b"\r\n");
        rest = &rest[size..];
    }
    out.extend_from_slice(if ext { b"0;last\r\n" } else { b"0\r\n" });
    for trailer in trailers {
        out.extend_from_slice(format!("{trailer}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
}

fn split_at(input: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
    points.sort_unstable();
    let mut pieces = Vec::new();
    let mut from = 0;
    for p in points {
        pieces.push(input[from..p].to_vec());
        from = p;
    }
    pieces.push(input[from..].to_vec());
    pieces
}

fn replay_pieces(pieces: &[Vec<u8>], head_request: bool) -> Replay {
    replay(pieces.iter().map(Vec::as_slice), head_request).comparable()
}

#[derive(Clone, Debug)]
enum Mutation {
    Replace(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    Truncate(usize),
    /// Repeats a range, e.g. a header line or a chunk.
    Duplicate(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let interesting = prop::sample::select(b"\r\n:; 0123456789abcdefxHTP/\t\x00\xff".to_vec());
    prop_oneof![
        (any::<usize>(), interesting.clone()).prop_map(|(at, b)| Mutation::Replace(at, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Mutation::Replace(at, b)),
        (any::<usize>(), interesting).prop_map(|(at, b)| Mutation::Insert(at, b)),
        any::<usize>().prop_map(Mutation::Delete),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), 1usize..32).prop_map(|(at, len)| Mutation::Duplicate(at, len)),
    ]
}

fn mutate(input: &mut Vec<u8>, mutation: &Mutation) {
    if input.is_empty() {
        return;
    }
    let at = |i: usize| i % input.len();
    match *mutation {
        Mutation::Replace(i, b) => {
            let i = at(i);
            input[i] = b;
        }
        Mutation::Insert(i, b) => input.insert(at(i), b),
        Mutation::Delete(i) => {
            input.remove(at(i));
        }
        Mutation::Truncate(i) => input.truncate(at(i)),
        Mutation::Duplicate(i, len) => {
            let from = at(i);
            let to = (from + len).min(input.len());
            let copy = input[from..to].to_vec();
            input.splice(to..to, copy);
        }
    }
}

proptest! {
    // 256 cases per property by default (about a second); PROPTEST_CASES=N for a deeper run.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(256),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Valid responses parse to what was generated, whole and split at every byte boundary.
    #[test]
    fn valid_responses_parse_identically_split_anywhere(
        responses in prop::collection::vec(response(), 1..4),
        head_request in prop::bool::weighted(0.2),
    ) {
        let (input, expected) = render(&responses, head_request);
        let whole = replay([input.as_slice()], head_request);
        prop_assert_eq!(&whole.error, &None);
        prop_assert_eq!(&whole.responses, &expected);
        prop_assert!(!whole.truncated && whole.unconsumed == 0, "{:?}", whole);
        for cut in 0..=input.len() {
            let split = replay([&input[..cut], &input[cut..]], head_request);
            prop_assert_eq!(&split, &whole, "split at {}", cut);
        }
        let bytewise = replay(input.chunks(1), head_request);
        prop_assert_eq!(&bytewise, &whole);
    }

    /// Valid responses with a few mutations: no panic, and the same outcome however split.
    #[test]
    fn mutated_responses_never_panic_and_parse_the_same_split_anywhere(
        responses in prop::collection::vec(response(), 1..4),
        head_request in prop::bool::weighted(0.2),
        mutations in prop::collection::vec(mutation(), 1..4),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let (mut input, _) = render(&responses, head_request);
        for m in &mutations {
            mutate(&mut input, m);
        }
        let whole = replay([input.as_slice()], head_request).comparable();
        let split = replay_pieces(&split_at(&input, &cuts), head_request);
        prop_assert_eq!(&split, &whole);
        let bytewise = replay(input.chunks(1), head_request).comparable();
        prop_assert_eq!(&bytewise, &whole);
    }

    /// Arbitrary bytes (often starting like a response): no panic, the same outcome however split.
    #[test]
    fn arbitrary_bytes_never_panic_and_parse_the_same_split_anywhere(
        prefix in prop::sample::select(vec![
            &b""[..],
            b"HTTP/1.1 200 OK\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n",
        ]),
        tail in prop::collection::vec(any::<u8>(), 0..300),
        head_request in any::<bool>(),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let input = [prefix, tail.as_slice()].concat();
        let whole = replay([input.as_slice()], head_request).comparable();
        let split = replay_pieces(&split_at(&input, &cuts), head_request);
        prop_assert_eq!(&split, &whole);
    }
}
