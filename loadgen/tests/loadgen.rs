//! End-to-end tests of the loader against the small servers in `common`. Every test runs on
//! both I/O engines (modules `epoll` and `uring` at the end).

mod common;

use common::{closed_port, Behavior, ReservedPort, TestServer};
use stackbench_load::cli::config_from_args;
use stackbench_load::errors::ErrorClass;
use stackbench_load::report::{self, Stats};
use stackbench_load::RunResult;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Runs the loader in-process on engine `e` ("epoll" or "uring").
fn load(e: &str, args: &[&str]) -> RunResult {
    let mut argv = vec!["stackbench-load", "--engine", e];
    argv.extend_from_slice(args);
    let config = config_from_args(argv).expect("valid command line");
    stackbench_load::run(&config).expect("the run happens")
}

fn hello() -> TestServer {
    TestServer::start(Behavior::Fixed {
        status: 200,
        body: "Hello World",
    })
}

fn errors(r: &RunResult, class: ErrorClass) -> u64 {
    r.recorded.errors.get(class)
}

fn exact_request_count_with_n(e: &str) {
    let server = hello();
    let url = server.url("/hello");
    let r = load(
        e,
        &[
            "-n",
            "1000",
            "-c",
            "8",
            "-t",
            "2",
            "--expect-body",
            "Hello World",
            &url,
        ],
    );
    let counts = &r.recorded.counts;
    assert_eq!(
        (counts.sent, counts.completed, counts.ok),
        (1000, 1000, 1000)
    );
    assert_eq!(r.recorded.errors.total(), 0);
    assert_eq!(server.requests(), 1000);
    assert_eq!(r.recorded.latency.len(), 1000);
    assert_eq!(server.accepts(), 8, "keep-alive: one connection each");
}

fn no_keepalive_opens_one_connection_per_request(e: &str) {
    let server = hello();
    let url = server.url("/hello");
    // The test server ignores `Connection: close`, so only the client's own close counts.
    let r = load(e, &["-n", "300", "-c", "4", "--no-keepalive", &url]);
    assert_eq!(r.recorded.counts.completed, 300);
    assert_eq!(server.accepts(), 300);
    assert_eq!(r.recorded.connect.len(), 300, "every connect is reported");
    let connect_p50 = r.recorded.connect.value_at_quantile(0.5);
    assert!(r.recorded.latency.value_at_quantile(0.5) >= connect_p50 / 2);
}

/// Without keep-alive the io_uring engine receives with one single-shot recv at a time: a
/// response that arrives in pieces, or that fills more than one 4 KiB receive buffer, must
/// still be read whole on every connection.
fn no_keepalive_reads_responses_in_pieces(e: &str) {
    let pause = Duration::from_millis(2);
    let trickle = TestServer::start(Behavior::Trickle {
        body: "Hello World",
        pause,
    });
    let url = trickle.url("/");
    let args = [
        "-n",
        "40",
        "-c",
        "2",
        "--no-keepalive",
        "--expect-body",
        "Hello World",
    ];
    let r = load(e, &[&args[..], &[&url]].concat());
    assert_eq!(
        (r.recorded.counts.completed, r.recorded.counts.ok),
        (40, 40)
    );
    assert_eq!(r.recorded.errors.total(), 0);
    assert_eq!(trickle.accepts(), 40);

    let body: &'static str = Box::leak("0123456789".repeat(1300).into_boxed_str());
    let large = TestServer::start(Behavior::Fixed { status: 200, body });
    let url = large.url("/");
    let args = [
        "-n",
        "100",
        "-c",
        "4",
        "--no-keepalive",
        "--expect-length",
        "13000",
    ];
    let r = load(e, &[&args[..], &[&url]].concat());
    assert_eq!(
        (r.recorded.counts.completed, r.recorded.counts.ok),
        (100, 100)
    );
    assert_eq!(large.accepts(), 100);
}

fn pipelining_keeps_several_requests_in_flight(e: &str) {
    let server = hello();
    let url = server.url("/hello");
    let r = load(
        e,
        &["-n", "2000", "-c", "2", "-t", "1", "--pipeline", "8", &url],
    );
    assert_eq!(r.recorded.counts.completed, 2000);
    assert_eq!(r.recorded.errors.total(), 0);
    assert_eq!(server.requests(), 2000);
    assert!(
        server.counters.max_batch.load(Ordering::SeqCst) > 1,
        "requests arrived pipelined"
    );
}

fn chunked_and_content_length_bodies_are_checked(e: &str) {
    let chunked = TestServer::start(Behavior::Chunked(&["Hello", " ", "World"]));
    let url = chunked.url("/");
    let sha = "a591a6d40bf420404a011733cfb7b190d62c65bf0bcda32b57b277d9ad9f146e"; // sha256("Hello World")
    let ok = load(
        e,
        &[
            "-n",
            "200",
            "-c",
            "2",
            "--expect-body",
            "Hello World",
            "--expect-sha256",
            sha,
            "--expect-length",
            "11",
            &url,
        ],
    );
    assert_eq!(
        (ok.recorded.counts.completed, ok.recorded.counts.ok),
        (200, 200)
    );
    let bad = load(
        e,
        &["-n", "200", "-c", "2", "--expect-body", "Hello Worle", &url],
    );
    assert_eq!(errors(&bad, ErrorClass::BodyMismatch), 200);
    assert_eq!(
        bad.recorded.counts.completed, 200,
        "a mismatch is still a completed response"
    );

    let fixed = hello();
    let url = fixed.url("/");
    let short = load(e, &["-n", "100", "-c", "2", "--expect-length", "12", &url]);
    assert_eq!(errors(&short, ErrorClass::BodyMismatch), 100);
    let sampled = load(
        e,
        &[
            "-n",
            "100",
            "-c",
            "1",
            "--expect-body",
            "nope",
            "--check-every",
            "10",
            &url,
        ],
    );
    assert_eq!(
        errors(&sampled, ErrorClass::BodyMismatch),
        10,
        "one response in ten is checked"
    );
}

fn status_errors_are_counted(e: &str) {
    let server = TestServer::start(Behavior::Fixed {
        status: 500,
        body: "boom",
    });
    let url = server.url("/");
    let r = load(e, &["-n", "100", "-c", "2", &url]);
    assert_eq!(errors(&r, ErrorClass::Status), 100);
    assert_eq!(
        (r.recorded.counts.completed, r.recorded.counts.ok),
        (100, 0)
    );
    let r = load(e, &["-n", "100", "-c", "2", "--expect-status", "500", &url]);
    assert_eq!(r.recorded.counts.ok, 100);
}

fn silent_server_times_out_and_connections_are_replaced(e: &str) {
    let server = TestServer::start(Behavior::Silent);
    let url = server.url("/");
    let r = load(
        e,
        &["-d", "1s", "-c", "2", "-t", "1", "--timeout", "200ms", &url],
    );
    let timeouts = errors(&r, ErrorClass::Timeout);
    assert!(
        (6..=12).contains(&timeouts),
        "about 2 connections x 5 timeouts, got {timeouts}"
    );
    assert_eq!(r.recorded.counts.completed, 0);
    assert!(
        server.accepts() >= timeouts,
        "each timeout replaced its connection"
    );
}

fn refused_connections_are_counted(e: &str) {
    let addr = closed_port();
    let url = format!("http://{addr}/");
    let r = load(e, &["-d", "300ms", "-c", "2", &url]);
    assert!(errors(&r, ErrorClass::Refused) > 0);
    assert_eq!(r.recorded.errors.total(), errors(&r, ErrorClass::Refused));
    assert_eq!(r.recorded.counts.completed, 0);
    let r = load(e, &["-n", "50", "-c", "2", &url]);
    assert_eq!(
        errors(&r, ErrorClass::Refused),
        50,
        "-n stops after n failed attempts too"
    );
}

fn refused_connects_back_off_instead_of_spinning(e: &str) {
    // A busy loop makes tens of thousands of connect attempts per second against a refused
    // port; with the back-off (1 ms doubling to 100 ms per connection) each of the 4
    // connections makes about 8 attempts in its first 130 ms and then 10 per second.
    let url = format!("http://{}/", closed_port());
    let r = load(e, &["-d", "1s", "-c", "4", "-t", "1", &url]);
    let attempts = errors(&r, ErrorClass::Refused);
    assert!(
        (20..200).contains(&attempts),
        "4 connections backing off for 1 s made {attempts} attempts"
    );
    assert_eq!(
        r.recorded.errors.total(),
        attempts,
        "all counted as refused"
    );
    assert!(
        r.duration < Duration::from_secs(2),
        "-d still bounds the run: {:?}",
        r.duration
    );
}

fn connections_recover_once_the_server_is_back(e: &str) {
    // The server appears 400 ms into the run: every connection in back-off finds it within
    // its capped wait (100 ms) and then runs normally.
    let port = ReservedPort::new();
    let url = format!("http://{}/", port.addr);
    let server = std::thread::scope(|scope| {
        let starter = scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(400));
            port.listen(Behavior::Fixed {
                status: 200,
                body: "ok",
            })
        });
        let r = load(e, &["-d", "1s", "-c", "4", "-t", "1", &url]);
        assert!(
            errors(&r, ErrorClass::Refused) > 0,
            "the port refused first"
        );
        assert_eq!(r.recorded.errors.total(), errors(&r, ErrorClass::Refused));
        assert!(
            r.recorded.counts.completed > 20,
            "completed {} after the server came back",
            r.recorded.counts.completed
        );
        starter.join().unwrap()
    });
    assert_eq!(server.accepts(), 4, "one keep-alive connection per slot");
}

fn close_mid_response_is_a_read_error(e: &str) {
    let server = TestServer::start(Behavior::CloseMidResponse);
    let r = load(e, &["-n", "50", "-c", "2", &server.url("/")]);
    eprintln!("{}", report::human(&r));
    assert_eq!(
        errors(&r, ErrorClass::Read) + errors(&r, ErrorClass::Reset),
        50
    );
    assert_eq!(r.recorded.counts.completed, 0);
}

fn malformed_responses_are_protocol_errors(e: &str) {
    let server = TestServer::start(Behavior::Malformed);
    let r = load(e, &["-n", "50", "-c", "2", &server.url("/")]);
    assert_eq!(errors(&r, ErrorClass::Protocol), 50);
}

fn warmup_is_not_recorded(e: &str) {
    let server = hello();
    let r = load(
        e,
        &[
            "-d",
            "500ms",
            "--warmup",
            "300ms",
            "-c",
            "2",
            "-R",
            "400",
            &server.url("/"),
        ],
    );
    // 400/s over 0.5 s recorded; the 120 warm-up requests reached the server but not the counts.
    assert_eq!(r.open_loop.as_ref().unwrap().scheduled, 200);
    assert_eq!(r.recorded.counts.completed, 200);
    assert_eq!(server.requests(), 320);
}

fn a_timed_closed_loop_counts_the_answers_its_warm_up_started(e: &str) {
    // Every answer takes 600 ms; 4 connections start together, the phase runs 0.7-1.7 s.
    // Each connection's second request (sent at 0.6 s, in the warm-up) is answered at 1.2 s,
    // inside the phase; its third (1.2 s) would be answered at 1.8 s, after it. So the phase
    // holds 4 answers, all of requests the warm-up sent: counting only requests started in it
    // would have left it empty (0 req/s from a server answering 6.7 a second).
    let server = TestServer::start(Behavior::Slow(Duration::from_millis(600)));
    let r = load(
        e,
        &[
            "-d",
            "1s",
            "--warmup",
            "700ms",
            "-c",
            "4",
            "-t",
            "1",
            &server.url("/"),
        ],
    );
    assert_eq!(r.recorded.counts.completed, 4, "{:?}", r.recorded.counts);
    assert!(r.recorded.latency.value_at_quantile(0.5) >= 600_000);
    let doc = report::json(&r);
    assert_eq!(doc["config"]["recorded_by"], "arrival");
}

fn open_loop_follows_the_schedule(e: &str) {
    let server = hello();
    let r = load(
        e,
        &[
            "-R",
            "500",
            "-d",
            "1s",
            "-c",
            "4",
            "-t",
            "2",
            &server.url("/"),
        ],
    );
    let open = r.open_loop.as_ref().unwrap();
    assert_eq!((open.scheduled, open.unsent), (500, 0));
    assert!(open.sustained);
    assert_eq!(r.recorded.counts.completed, 500);
}

fn unsustainable_rate_is_reported(e: &str) {
    let server = TestServer::start(Behavior::Slow(Duration::from_millis(50)));
    let r = load(
        e,
        &[
            "-R",
            "200",
            "-d",
            "1s",
            "-c",
            "2",
            "-t",
            "1",
            &server.url("/"),
        ],
    );
    let open = r.open_loop.as_ref().unwrap();
    assert!(!open.sustained, "2 connections x 20/s cannot carry 200/s");
    assert!(open.unsent > 100);
    assert!(r.recorded.counts.waited > 0);
    assert!(r.warnings.iter().any(|w| w.contains("not sustained")));
}

/// The classic coordinated-omission demonstration: a server that stops for 1 s every 2 s.
/// The closed loop only has its few stuck connections' requests in the stall and under-reports;
/// the open loop charges every request scheduled during the stall.
fn open_loop_sees_the_stall_that_closed_loop_hides(e: &str) {
    let stall = || {
        TestServer::start(Behavior::Stall {
            period: Duration::from_millis(2000),
            stall: Duration::from_secs(1),
        })
    };
    let closed_server = stall();
    let closed = load(
        e,
        &["-d", "3s", "-c", "4", "-t", "1", &closed_server.url("/")],
    );
    let open_server = stall();
    let open = load(
        e,
        &[
            "-R",
            "400",
            "-d",
            "3s",
            "-c",
            "20",
            "-t",
            "1",
            &open_server.url("/"),
        ],
    );

    let closed_stats = Stats::of(&closed.recorded.latency);
    let open_stats = Stats::of(&open.recorded.latency);
    eprintln!("closed {closed_stats:?}\nopen {open_stats:?}");
    assert!(
        closed_stats.max >= 500_000,
        "the closed loop did hit the stall"
    );
    assert!(
        closed_stats.p99 < 100_000,
        "closed loop p99 hides the stall: {}",
        closed_stats.p99
    );
    assert!(
        open_stats.p99 >= 500_000,
        "open loop p99 shows the stall: {}",
        open_stats.p99
    );
    assert!(
        open_stats.p90 >= 100_000,
        "a sizeable share was delayed: {}",
        open_stats.p90
    );
    assert!(open.recorded.counts.waited > 0);
    assert!(open.open_loop.as_ref().unwrap().sustained);
}

/// The open-loop ground truth at low load: a server that holds every request arriving in the
/// last half of each second until the second ends, at 200/s over whole seconds. A request
/// intended at phase `p` of the second waits `max(0, 1 s - p)` when `p >= 0.5 s`, so half the
/// latencies are near zero and the rest spread evenly up to 500 ms: quantile q (above the
/// median) is `(q - 0.5) x 1 s`. The schedule is evenly spaced (5 ms), so a measured quantile
/// is the truth within a slot or two; the tolerance is 10% of the stall upwards, for a busy
/// machine's late wake-ups, and two slots downwards. Each stall ends by releasing about 100
/// responses at once, the burst an engine must take in one turn.
fn open_loop_matches_the_stall_ground_truth(e: &str) {
    let server = TestServer::start(Behavior::Stall {
        period: Duration::from_secs(1),
        stall: Duration::from_millis(500),
    });
    let r = load(
        e,
        &[
            "-R",
            "200",
            "-d",
            "2s",
            "-c",
            "150",
            "-t",
            "1",
            &server.url("/"),
        ],
    );
    let open = r.open_loop.as_ref().unwrap();
    assert_eq!((open.scheduled, r.recorded.counts.completed), (400, 400));
    let latency = &r.recorded.latency;
    let quantile_ms = |q: f64| latency.value_at_quantile(q) as f64 / 1000.0;
    let quantiles = [0.25, 0.75, 0.9, 0.99].map(|q| (q, quantile_ms(q)));
    eprintln!("{e}: (quantile, ms) {quantiles:?}");
    assert!(quantile_ms(0.25) < 50.0, "p25 {} ms", quantile_ms(0.25));
    for q in [0.75, 0.9, 0.99] {
        let truth = (q - 0.5) * 1000.0;
        let measured = quantile_ms(q);
        assert!(
            (truth - 10.0..=truth + 50.0).contains(&measured),
            "p{}: {measured} ms, truth {truth} ms",
            q * 100.0
        );
    }
}

/// Against a server that answers every request after exactly 20 ms, at a low fixed rate, every
/// latency is 20 ms plus the loopback round trip: no engine may report less (a response
/// timestamped before it arrived), and the median must be the delay. The tail is not checked:
/// on a shared machine it is the other processes' (a p99 of 55 ms was seen with 100 samples).
fn a_known_fixed_delay_is_measured_as_it_is(e: &str) {
    let server = TestServer::start(Behavior::Slow(Duration::from_millis(20)));
    let r = load(
        e,
        &[
            "-R",
            "100",
            "-d",
            "1s",
            "-c",
            "10",
            "-t",
            "1",
            &server.url("/"),
        ],
    );
    assert_eq!(r.recorded.counts.completed, 100);
    let stats = Stats::of(&r.recorded.latency);
    eprintln!("{e}: {stats:?}");
    assert!(stats.min >= 20_000, "faster than the delay: {stats:?}");
    assert!(stats.p50 <= 25_000, "p50 {} us", stats.p50);
}

/// Without keep-alive a request's latency holds its connect, its write, the server's answer
/// and the read: over loopback that is tens of microseconds, never one. A fast server and
/// a loader-bound closed loop: the loader submits the next request while it takes the
/// completions of a turn, and the answer can arrive before the turn ends. A turn stamped
/// with one instant measured such requests at 0 µs (most of a loader-bound level's, p50 1 µs).
fn a_request_is_never_faster_than_a_loopback_round_trip(e: &str) {
    let server = hello();
    let r = load(
        e,
        &[
            "-d",
            "1s",
            "-c",
            "64",
            "-t",
            "1",
            "--no-keepalive",
            &server.url("/hello"),
        ],
    );
    assert!(r.recorded.counts.completed > 100, "{:?}", r.recorded.counts);
    let latency = Stats::of(&r.recorded.latency);
    let connect = Stats::of(&r.recorded.connect);
    eprintln!("{e}: latency {latency:?}, connect {connect:?}");
    assert!(
        latency.p50 >= 5,
        "latency p50 {} us: {latency:?}",
        latency.p50
    );
    assert!(
        connect.p50 >= 2,
        "connect p50 {} us: {connect:?}",
        connect.p50
    );
    assert!(
        latency.p50 >= connect.p50,
        "{latency:?} vs connect {connect:?}"
    );
}

fn json_document_has_the_contract_fields(e: &str) {
    let server = hello();
    let r = load(
        e,
        &[
            "-n",
            "300",
            "-c",
            "3",
            "--expect-status",
            "200",
            &server.url("/"),
        ],
    );
    let doc = report::json(&r);
    assert_eq!(doc["schema"], "stackbench-load/5");
    assert_eq!(doc["config"]["recorded_by"], "start"); // -n 300: the 300 started
    assert_eq!(doc["tool"]["engine"], e);
    assert_eq!(doc["config"]["mode"], "closed");
    assert_eq!(doc["config"]["keepalive"], "on");
    assert_eq!(doc["config"]["expect"]["status"], 200);
    assert_eq!(doc["requests"]["completed"], 300);
    assert_eq!(doc["errors"]["protocol"], 0);
    assert_eq!(doc["latency_us"]["count"], 300);
    assert!(doc["open_loop"].is_null());
    assert!(doc["histogram"]["data"]
        .as_str()
        .unwrap()
        .starts_with("HISTFAAA"));
    assert_eq!(doc["timeseries"][0]["t_s"], 1);
    assert_eq!(doc["limits"]["connections_opened"], 3);
    assert!(doc["loader_cpu"]["user_s"].as_f64().is_some());
    assert!(report::human(&r).contains("Requests/sec:"));
}

fn timeseries_has_per_second_latency_and_marks_the_partial_last_second(e: &str) {
    let server = hello();
    let r = load(e, &["-d", "1500ms", "-c", "2", "-t", "1", &server.url("/")]);
    let doc = report::json(&r);
    let series = doc["timeseries"].as_array().unwrap();
    // 1.5 s touch two seconds; a loaded machine may stop the threads a little late.
    let seconds = r.duration.as_secs_f64();
    assert_eq!(series.len(), seconds.ceil() as usize, "{seconds} s");
    let (last, full) = series.split_last().unwrap();
    for point in full {
        assert_eq!(point["partial"], false);
        assert_eq!(point["duration_s"].as_f64(), Some(1.0));
    }
    assert_eq!(last["partial"], true);
    let tail = last["duration_s"].as_f64().unwrap();
    assert!(
        (tail - seconds.fract()).abs() < 1e-6,
        "the last second lasted {tail} s"
    );
    let completed: u64 = series
        .iter()
        .map(|p| p["completed"].as_u64().unwrap())
        .sum();
    assert_eq!(completed, r.recorded.counts.completed);
    assert!(series[0]["completed"].as_u64().unwrap() > 0);
    for point in series.iter().filter(|p| p["completed"].as_u64() > Some(0)) {
        let (p50, p90) = (
            point["p50_us"].as_u64().unwrap(),
            point["p90_us"].as_u64().unwrap(),
        );
        let (p99, max) = (
            point["p99_us"].as_u64().unwrap(),
            point["max_us"].as_u64().unwrap(),
        );
        assert!(0 < p50 && p50 <= p90 && p90 <= p99 && p99 <= max, "{point}");
    }
    assert!(series
        .iter()
        .all(|p| p["histogram"].as_str().unwrap().starts_with("HISTF")));
}

fn requests_left_unanswered_at_the_end_are_reported_with_their_age(e: &str) {
    // A closed loop drops the requests in flight when the duration ends; a starved connection
    // must still show up, as a count and an age, not vanish from the figures.
    let server = TestServer::start(Behavior::Silent);
    let r = load(
        e,
        &[
            "-c",
            "3",
            "-t",
            "1",
            "-d",
            "600ms",
            "--timeout",
            "10s",
            &server.url("/"),
        ],
    );
    assert_eq!(r.recorded.counts.completed, 0);
    assert_eq!(r.unanswered.count, 3);
    assert!(
        r.unanswered.oldest >= Duration::from_millis(500),
        "{:?}",
        r.unanswered
    );
}

/// Generates one test per engine for each scenario above.
macro_rules! on_both_engines {
    ($($name:ident),* $(,)?) => {
        mod epoll {
            $(#[test] fn $name() { super::$name("epoll") })*
        }
        mod uring {
            $(#[test] fn $name() { super::$name("uring") })*
        }
    };
}

on_both_engines!(
    exact_request_count_with_n,
    no_keepalive_opens_one_connection_per_request,
    no_keepalive_reads_responses_in_pieces,
    pipelining_keeps_several_requests_in_flight,
    chunked_and_content_length_bodies_are_checked,
    status_errors_are_counted,
    silent_server_times_out_and_connections_are_replaced,
    refused_connections_are_counted,
    refused_connects_back_off_instead_of_spinning,
    connections_recover_once_the_server_is_back,
    close_mid_response_is_a_read_error,
    malformed_responses_are_protocol_errors,
    warmup_is_not_recorded,
    a_timed_closed_loop_counts_the_answers_its_warm_up_started,
    open_loop_follows_the_schedule,
    unsustainable_rate_is_reported,
    open_loop_sees_the_stall_that_closed_loop_hides,
    open_loop_matches_the_stall_ground_truth,
    a_known_fixed_delay_is_measured_as_it_is,
    a_request_is_never_faster_than_a_loopback_round_trip,
    json_document_has_the_contract_fields,
    timeseries_has_per_second_latency_and_marks_the_partial_last_second,
    requests_left_unanswered_at_the_end_are_reported_with_their_age,
);
