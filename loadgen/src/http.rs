//! Incremental HTTP/1.1 response parser: headers via `httparse`, our own body framing
//! (Content-Length, chunked, until-close). It never copies or allocates: body bytes are
//! handed to a `BodySink` as they pass through the buffer they arrived in.

/// Receives body bytes (after de-chunking) for checking.
pub trait BodySink {
    fn body(&mut self, data: &[u8]);
}

/// Sink that ignores the body.
impl BodySink for () {
    fn body(&mut self, _data: &[u8]) {}
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResponseHead {
    pub status: u16,
    /// The server will close the connection after this response.
    pub close: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The response is not complete; `consumed` bytes were used and may be discarded.
    NeedMore { consumed: usize },
    /// The response is complete after `consumed` bytes.
    Done { consumed: usize },
}

/// A response that does not follow HTTP/1.1 framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtocolError(pub &'static str);

const MAX_HEADERS: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Reading the size line `HEX [BWS] [; ext] CRLF`: `digits` seen so far, `after` once
    /// whitespace or CR ended the digits, `ext` once a `;` extension started.
    Size {
        value: u64,
        digits: u32,
        after: bool,
        ext: bool,
    },
    Data(u64),
    DataEnd {
        seen_cr: bool,
    },
    /// Trailer section after the last chunk, ends with an empty line.
    Trailer {
        line_len: usize,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    Length(u64),
    Chunked(Chunk),
    UntilClose,
}

#[derive(Debug, Clone)]
pub struct ResponseParser {
    state: State,
    head: ResponseHead,
    body_len: u64,
}

impl Default for ResponseParser {
    fn default() -> Self {
        Self {
            state: State::Head,
            head: ResponseHead::default(),
            body_len: 0,
        }
    }
}

impl ResponseParser {
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    pub fn head(&self) -> ResponseHead {
        self.head
    }

    /// Body bytes so far (after de-chunking).
    pub fn body_len(&self) -> u64 {
        self.body_len
    }

    /// True once the head was parsed and the body is being read.
    pub fn in_body(&self) -> bool {
        self.state != State::Head
    }

    /// The connection reached EOF: true if that legitimately ends the current response.
    pub fn ends_at_eof(&self) -> bool {
        self.state == State::UntilClose
    }

    /// Consumes as much of `buf` as belongs to the current response.
    pub fn advance(
        &mut self,
        buf: &[u8],
        head_request: bool,
        sink: &mut impl BodySink,
    ) -> Result<Step, ProtocolError> {
        let mut pos = 0;
        loop {
            let rest = &buf[pos..];
            match self.state {
                State::Head => match self.parse_head(rest, head_request)? {
                    None => return Ok(Step::NeedMore { consumed: pos }),
                    Some(used) => {
                        pos += used;
                        if self.state == State::Head && self.head.status >= 200 {
                            return Ok(Step::Done { consumed: pos });
                        }
                    }
                },
                State::Length(remaining) => {
                    let take = remaining.min(rest.len() as u64) as usize;
                    self.feed(sink, &rest[..take]);
                    pos += take;
                    if remaining == take as u64 {
                        return Ok(Step::Done { consumed: pos });
                    }
                    self.state = State::Length(remaining - take as u64);
                    return Ok(Step::NeedMore { consumed: pos });
                }
                State::UntilClose => {
                    self.feed(sink, rest);
                    return Ok(Step::NeedMore {
                        consumed: buf.len(),
                    });
                }
                State::Chunked(chunk) => {
                    if rest.is_empty() {
                        return Ok(Step::NeedMore { consumed: pos });
                    }
                    let (used, done) = self.chunked(chunk, rest, sink)?;
                    pos += used;
                    if done {
                        return Ok(Step::Done { consumed: pos });
                    }
                }
            }
        }
    }

    fn feed(&mut self, sink: &mut impl BodySink, data: &[u8]) {
        if !data.is_empty() {
            self.body_len += data.len() as u64;
            sink.body(data);
        }
    }

    /// Parses the head if complete; returns the bytes used and sets the body state.
    /// Interim 1xx responses are skipped (state stays `Head` with status < 200).
    fn parse_head(
        &mut self,
        buf: &[u8],
        head_request: bool,
    ) -> Result<Option<usize>, ProtocolError> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut headers);
        let used = match response.parse(buf) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(httparse::Error::TooManyHeaders) => return Err(ProtocolError("too many headers")),
            Err(_) => return Err(ProtocolError("malformed status line or header")),
        };
        let status = response.code.unwrap_or(0);
        if status < 100 {
            // Would otherwise pass as an interim 1xx response and be skipped.
            return Err(ProtocolError("status code below 100"));
        }
        let http10 = response.version == Some(0);
        let framing = Framing::from_headers(response.headers)?;
        self.head = ResponseHead {
            status,
            close: framing.close || (http10 && !framing.keep_alive),
        };
        self.body_len = 0;
        let no_body = head_request || status < 200 || status == 204 || status == 304;
        self.state = if no_body {
            State::Head
        } else if framing.chunked {
            State::Chunked(Chunk::Size {
                value: 0,
                digits: 0,
                after: false,
                ext: false,
            })
        } else if let Some(len) = framing.length {
            if len == 0 {
                State::Head
            } else {
                State::Length(len)
            }
        } else {
            State::UntilClose
        };
        Ok(Some(used))
    }

    /// Runs the chunked-body state machine over `buf`; returns (bytes used, response done).
    fn chunked(
        &mut self,
        mut chunk: Chunk,
        buf: &[u8],
        sink: &mut impl BodySink,
    ) -> Result<(usize, bool), ProtocolError> {
        let mut pos = 0;
        while pos < buf.len() {
            let byte = buf[pos];
            chunk = match chunk {
                Chunk::Data(remaining) => {
                    let take = remaining.min((buf.len() - pos) as u64) as usize;
                    self.feed(sink, &buf[pos..pos + take]);
                    pos += take;
                    self.state = State::Chunked(if remaining == take as u64 {
                        Chunk::DataEnd { seen_cr: false }
                    } else {
                        Chunk::Data(remaining - take as u64)
                    });
                    return Ok((pos, false));
                }
                Chunk::Size {
                    value,
                    digits,
                    after,
                    ext,
                } => {
                    pos += 1;
                    chunk_size_step(value, digits, after, ext, byte)?
                }
                Chunk::DataEnd { seen_cr } => {
                    pos += 1;
                    match (byte, seen_cr) {
                        (b'\r', false) => Chunk::DataEnd { seen_cr: true },
                        (b'\n', _) => Chunk::Size {
                            value: 0,
                            digits: 0,
                            after: false,
                            ext: false,
                        },
                        _ => return Err(ProtocolError("chunk data not followed by CRLF")),
                    }
                }
                Chunk::Trailer { line_len } => {
                    pos += 1;
                    match byte {
                        b'\n' if line_len == 0 => {
                            self.state = State::Head;
                            return Ok((pos, true));
                        }
                        b'\n' => Chunk::Trailer { line_len: 0 },
                        b'\r' => Chunk::Trailer { line_len },
                        _ => Chunk::Trailer {
                            line_len: line_len + 1,
                        },
                    }
                }
            };
        }
        self.state = State::Chunked(chunk);
        Ok((pos, false))
    }
}

/// One byte of a chunk-size line `HEX [BWS] [; ext] CRLF` (a bare LF is accepted as CRLF).
/// Digits after whitespace or CR (`1 2`, `1\r2`) are refused rather than read as `12`; leading
/// zeros are fine, a size past 2^60 is refused.
fn chunk_size_step(
    value: u64,
    digits: u32,
    after: bool,
    ext: bool,
    byte: u8,
) -> Result<Chunk, ProtocolError> {
    if byte == b'\n' {
        if digits == 0 {
            return Err(ProtocolError("empty chunk size"));
        }
        return Ok(if value == 0 {
            Chunk::Trailer { line_len: 0 }
        } else {
            Chunk::Data(value)
        });
    }
    let size = |value, digits, after, ext| Chunk::Size {
        value,
        digits,
        after,
        ext,
    };
    if ext {
        return Ok(size(value, digits, after, ext));
    }
    match byte {
        b';' if digits > 0 => return Ok(size(value, digits, true, true)),
        b' ' | b'\t' | b'\r' if digits > 0 => return Ok(size(value, digits, true, false)),
        _ => {}
    }
    let digit = (byte as char)
        .to_digit(16)
        .filter(|_| !after)
        .ok_or(ProtocolError("bad chunk size"))?;
    if value >= 1 << 60 {
        return Err(ProtocolError("chunk size too large"));
    }
    Ok(size(
        value * 16 + u64::from(digit),
        digits + 1,
        false,
        false,
    ))
}

/// `Content-Length = 1*DIGIT`: no sign, no spaces inside (`str::parse` would take `+5`).
fn parse_length(text: &str) -> Result<u64, ProtocolError> {
    let bad = ProtocolError("bad Content-Length");
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad);
    }
    text.parse::<u64>().map_err(|_| bad)
}

/// What the headers say about framing and connection reuse.
#[derive(Debug, Default)]
struct Framing {
    length: Option<u64>,
    chunked: bool,
    close: bool,
    keep_alive: bool,
}

impl Framing {
    fn from_headers(headers: &[httparse::Header<'_>]) -> Result<Self, ProtocolError> {
        let mut framing = Framing::default();
        for header in headers {
            let name = header.name;
            // Only the framing headers are decoded; others are skipped without UTF-8 checks.
            let value = || {
                std::str::from_utf8(header.value)
                    .map(str::trim)
                    .map_err(|_| ProtocolError("non-ASCII framing header"))
            };
            if name.eq_ignore_ascii_case("content-length") {
                let len = parse_length(value()?)?;
                if framing.length.is_some_and(|old| old != len) {
                    return Err(ProtocolError("conflicting Content-Length headers"));
                }
                framing.length = Some(len);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                let last = value()?.rsplit(',').next().unwrap_or("").trim();
                framing.chunked = last.eq_ignore_ascii_case("chunked");
            } else if name.eq_ignore_ascii_case("connection") {
                for token in value()?.split(',') {
                    let token = token.trim();
                    framing.close |= token.eq_ignore_ascii_case("close");
                    framing.keep_alive |= token.eq_ignore_ascii_case("keep-alive");
                }
            }
        }
        Ok(framing)
    }
}

/// One response as [`replay`] saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replayed {
    pub status: u16,
    pub close: bool,
    pub body: Vec<u8>,
}

/// What a byte stream parses into, response by response.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Replay {
    pub responses: Vec<Replayed>,
    /// The protocol error that ended the stream (the worker closes the connection there).
    pub error: Option<ProtocolError>,
    /// Received bytes left unconsumed when the stream ended (a partial head).
    pub unconsumed: usize,
    /// The stream ended inside a response (the worker counts a read error).
    pub truncated: bool,
}

impl Replay {
    /// The outcome without what depends on how the bytes were delivered: after an error the
    /// worker drops the connection, so what had arrived behind the error does not matter.
    pub fn comparable(mut self) -> Replay {
        if self.error.is_some() {
            self.unconsumed = 0;
            self.truncated = false;
        }
        self
    }
}

#[derive(Default)]
struct Collect(Vec<u8>);

impl BodySink for Collect {
    fn body(&mut self, data: &[u8]) {
        self.0.extend_from_slice(data);
    }
}

/// The bytes of one connection that the parser has not consumed yet: only ever a response
/// head (or chunk-size line) split across reads. Both engines parse straight from the buffer
/// the bytes arrived in (a per-thread buffer, or an io_uring provided buffer) and keep only
/// such a tail here, so a connection between responses holds no read buffer at all.
#[derive(Debug, Default)]
pub struct Carry(Vec<u8>);

impl Carry {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Offers the kept bytes followed by `data` to `parse`, which returns how many bytes it
    /// consumed (it stops where a response needs more), or `None` when the connection ended
    /// (the rest is dropped). Keeps what was not consumed; returns false when it ended.
    pub fn feed(&mut self, data: &[u8], parse: impl FnOnce(&[u8]) -> Option<usize>) -> bool {
        let consumed = if self.0.is_empty() {
            let consumed = parse(data);
            if let Some(used) = consumed {
                self.0.extend_from_slice(&data[used..]);
            }
            consumed
        } else {
            self.0.extend_from_slice(data);
            let consumed = parse(&self.0);
            if let Some(used) = consumed {
                self.0.drain(..used);
            }
            consumed
        };
        if self.0.is_empty() {
            self.0 = Vec::new(); // an idle connection keeps no allocation
        }
        consumed.is_some()
    }
}

/// Feeds `pieces` to a parser the way the worker's read path does (through a [`Carry`]: the
/// unconsumed tail is kept and offered again with the next piece; after each response the
/// parser is reset), then ends the stream as a peer close would. For the tests and the fuzz
/// target: unlike the worker it allocates. Panics when the parser breaks its contract:
/// consuming more than it was given, or completing a response without consuming a byte.
pub fn replay<'a>(pieces: impl IntoIterator<Item = &'a [u8]>, head_request: bool) -> Replay {
    let mut parser = ResponseParser::default();
    let mut sink = Collect::default();
    let mut carry = Carry::default();
    let mut out = Replay::default();
    for piece in pieces {
        let parse =
            |bytes: &[u8]| replay_piece(bytes, head_request, &mut parser, &mut sink, &mut out);
        if !carry.feed(piece, parse) {
            return out;
        }
    }
    if parser.ends_at_eof() {
        out.responses.push(Replayed {
            status: parser.head().status,
            close: true,
            body: std::mem::take(&mut sink.0),
        });
    } else {
        out.truncated = !carry.is_empty() || parser.in_body();
    }
    out.unconsumed = carry.len();
    out
}

/// Parses what `bytes` holds; `None` after a protocol error (recorded in `out`).
fn replay_piece(
    bytes: &[u8],
    head_request: bool,
    parser: &mut ResponseParser,
    sink: &mut Collect,
    out: &mut Replay,
) -> Option<usize> {
    let mut pos = 0;
    while pos < bytes.len() {
        let rest = &bytes[pos..];
        let step = match parser.advance(rest, head_request, sink) {
            Ok(step) => step,
            Err(e) => {
                out.error = Some(e);
                out.unconsumed = rest.len();
                return None;
            }
        };
        match step {
            Step::NeedMore { consumed } => {
                assert!(
                    consumed <= rest.len(),
                    "consumed {consumed} of {}",
                    rest.len()
                );
                return Some(pos + consumed);
            }
            Step::Done { consumed } => {
                assert!(
                    (1..=rest.len()).contains(&consumed),
                    "response done after consuming {consumed} of {}",
                    rest.len()
                );
                pos += consumed;
                out.responses.push(Replayed {
                    status: parser.head().status,
                    close: parser.head().close,
                    body: std::mem::take(&mut sink.0),
                });
                parser.reset();
            }
        }
    }
    Some(pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in pieces of `step` bytes, as a socket might deliver it.
    fn parse_in_steps(input: &[u8], step: usize) -> (Vec<(u16, Vec<u8>)>, usize) {
        let out = replay(input.chunks(step), false);
        assert_eq!(out.error, None);
        let responses = out.responses.into_iter().map(|r| (r.status, r.body));
        (responses.collect(), out.unconsumed)
    }

    #[test]
    fn content_length_and_pipelined_responses() {
        let two = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 404 NF\r\ncontent-length: 0\r\n\r\n";
        for step in [1, 3, 7, two.len()] {
            let (out, left) = parse_in_steps(two, step);
            assert_eq!(
                out,
                vec![(200, b"hello".to_vec()), (404, vec![])],
                "step {step}"
            );
            assert_eq!(left, 0);
        }
    }

    #[test]
    fn chunked_with_extensions_and_trailers() {
        let input = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nHello\r\n6\r\n World\r\n0\r\nX-T: 1\r\n\r\n";
        for step in [1, 2, 5, input.len()] {
            let (out, left) = parse_in_steps(input, step);
            assert_eq!(out, vec![(200, b"Hello World".to_vec())], "step {step}");
            assert_eq!(left, 0);
        }
    }

    #[test]
    fn interim_responses_are_skipped_and_no_body_statuses_end_at_head() {
        let input = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
        let (out, _) = parse_in_steps(input, input.len());
        assert_eq!(out, vec![(204, vec![])]);
    }

    #[test]
    fn until_close_and_connection_close() {
        let mut p = ResponseParser::default();
        let input = b"HTTP/1.0 200 OK\r\n\r\nabc";
        let step = p.advance(input, false, &mut ()).unwrap();
        assert_eq!(
            step,
            Step::NeedMore {
                consumed: input.len()
            }
        );
        assert!(p.ends_at_eof());
        assert!(p.head().close, "HTTP/1.0 without keep-alive closes");
        assert_eq!(p.body_len(), 3);
        let mut p = ResponseParser::default();
        let input = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
        assert!(matches!(
            p.advance(input, false, &mut ()),
            Ok(Step::Done { .. })
        ));
        assert!(p.head().close);
    }

    #[test]
    fn malformed_responses_are_protocol_errors() {
        let bad: [&[u8]; 4] = [
            b"garbage\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab",
        ];
        for input in bad {
            let mut p = ResponseParser::default();
            assert!(p.advance(input, false, &mut ()).is_err(), "{input:?}");
        }
    }

    #[test]
    fn chunk_size_lines_follow_the_grammar() {
        let chunked = |size_line: &str| {
            let input = format!(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{size_line}\r\nHello\r\n0\r\n\r\n"
            );
            replay([input.as_bytes()], false)
        };
        for good in [
            "5",
            "005",
            "5 ",
            "5;a=b c",
            "5 ; a",
            "0000000000000000000005",
        ] {
            let out = chunked(good);
            assert_eq!(out.error, None, "{good:?}");
            assert_eq!(out.responses[0].body, b"Hello", "{good:?}");
        }
        for bad in ["", " 5", "1 2", "1\r2", "5x", ";5", "10000000000000000"] {
            assert!(chunked(bad).error.is_some(), "{bad:?}");
        }
    }

    #[test]
    fn content_length_is_digits_only_and_status_at_least_100() {
        for bad in [
            "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello",
            "HTTP/1.1 200 OK\r\nContent-Length: 5 5\r\n\r\nhello",
            "HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n",
            "HTTP/1.1 000 OK\r\n\r\n",
        ] {
            let out = replay([bad.as_bytes()], false);
            assert!(out.error.is_some(), "{bad:?}: {out:?}");
        }
        let ok = replay(
            [&b"HTTP/1.1 200 OK\r\nContent-Length:  5 \r\n\r\nhello"[..]],
            false,
        );
        assert_eq!(ok.responses[0].body, b"hello");
    }

    #[test]
    fn replay_reports_truncation_and_until_close_bodies() {
        let cut = replay(
            [&b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel"[..]],
            false,
        );
        assert!(cut.truncated && cut.responses.is_empty());
        let partial_head = replay([&b"HTTP/1.1 200 OK\r\nContent-"[..]], false);
        assert!(partial_head.truncated);
        assert_eq!(partial_head.unconsumed, 25);
        let until_close = replay([&b"HTTP/1.1 200 OK\r\n\r\nab"[..], b"cd"], false);
        assert!(!until_close.truncated);
        assert_eq!(until_close.responses[0].body, b"abcd");
    }

    #[test]
    fn head_request_has_no_body() {
        let mut p = ResponseParser::default();
        let input = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n";
        assert_eq!(
            p.advance(input, true, &mut ()).unwrap(),
            Step::Done {
                consumed: input.len()
            }
        );
    }
}
