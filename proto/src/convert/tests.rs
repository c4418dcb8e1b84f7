//! Round trips of every domain value through the wire, and decoding of arbitrary bytes
//! and arbitrary field values: never a panic, every bad message a typed error.

use super::*;
use proptest::prelude::*;
use prost::Message;

fn position() -> impl Strategy<Value = Position> {
    proptest::collection::vec(0usize..18, 0..30).prop_map(|v| {
        let moves: Vec<Move> = v.into_iter().filter_map(Move::from_index).collect();
        Position::new(Cube::from_moves(&moves)).expect("a scramble is a position")
    })
}

fn moves() -> impl Strategy<Value = Vec<Move>> {
    proptest::collection::vec(0usize..18, 0..25)
        .prop_map(|v| v.into_iter().filter_map(Move::from_index).collect())
}

fn method() -> impl Strategy<Value = Method> {
    prop_oneof![Just(Method::Optimal), Just(Method::TwoPhase)]
}

fn stop() -> impl Strategy<Value = Stop> {
    prop_oneof![
        Just(Stop::Completed),
        Just(Stop::Exhausted),
        Just(Stop::Cancelled),
        Just(Stop::TimeLimit),
        Just(Stop::ProbeLimit),
    ]
}

fn settings() -> impl Strategy<Value = Settings> {
    (
        method(),
        any::<u8>(),
        any::<u8>(),
        proptest::option::of(any::<u32>()),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<u64>()),
        any::<bool>(),
    )
        .prop_map(
            |(
                method,
                min_length,
                max_length,
                max_solutions,
                time_limit_ms,
                probe_limit,
                anytime,
            )| {
                Settings {
                    method,
                    min_length,
                    max_length,
                    max_solutions,
                    time_limit_ms,
                    probe_limit,
                    anytime,
                }
            },
        )
}

fn settings_error() -> impl Strategy<Value = SettingsError> {
    prop_oneof![
        any::<u8>().prop_map(|value| SettingsError::MaxLength { value }),
        (any::<u8>(), any::<u8>()).prop_map(|(min, max)| SettingsError::MinAboveMax { min, max }),
        Just(SettingsError::NoSolutions),
        any::<u32>().prop_map(|value| SettingsError::TooManySolutions { value }),
        Just(SettingsError::EverySolutionTwoPhase),
        Just(SettingsError::AnytimeOptimal),
        Just(SettingsError::AnytimeWithoutTimeLimit),
    ]
}

fn job_error() -> impl Strategy<Value = JobError> {
    prop_oneof![
        ".{0,12}".prop_map(|name| JobError::MissingTable { name }),
        (".{0,12}", method()).prop_map(|(name, method)| JobError::WrongTable { name, method }),
        settings_error().prop_map(JobError::InvalidSettings),
        ".{0,20}".prop_map(|moves| JobError::Verification { moves }),
        (".{0,12}", ".{0,20}")
            .prop_map(|(path, reason)| JobError::TableUnreadable { path, reason }),
        (".{0,12}", ".{0,20}").prop_map(|(path, reason)| JobError::TableDamaged { path, reason }),
        ".{0,20}".prop_map(|message| JobError::Internal(Internal::Panic { message })),
        ".{0,20}".prop_map(|reason| JobError::Internal(Internal::Threads { reason })),
        ".{0,20}".prop_map(|reason| JobError::Undecodable { reason }),
    ]
}

fn job() -> impl Strategy<Value = Job> {
    let batch = (
        settings(),
        proptest::collection::vec((any::<u64>(), position()), 0..5),
    )
        .prop_map(|(settings, items)| Work::Batch {
            settings,
            items: items
                .into_iter()
                .map(|(line, position)| BatchItem { line, position })
                .collect(),
        });
    let subtrees = (
        position(),
        any::<u8>(),
        proptest::collection::vec(moves(), 0..6),
        proptest::option::of(any::<u32>()),
        proptest::option::of(any::<u64>()),
        (0..=crate::pieces::MAX_PIECE_LEVELS, any::<bool>()),
    )
        .prop_map(
            |(position, depth, prefixes, max_solutions, time_limit_ms, (pieces, split))| {
                Work::Subtrees(SubtreeWork {
                    position,
                    depth,
                    prefixes,
                    max_solutions,
                    time_limit_ms,
                    pieces,
                    split,
                })
            },
        );
    (
        any::<u64>(),
        any::<u32>(),
        "[a-z0-9]{0,10}",
        prop_oneof![batch, subtrees],
    )
        .prop_map(|(id, attempt, table, work)| Job {
            id: JobId(id),
            attempt,
            table,
            work,
        })
}

fn job_result() -> impl Strategy<Value = JobResult> {
    let pos = (
        any::<u64>(),
        proptest::collection::vec(moves(), 0..3),
        any::<bool>(),
        any::<u8>(),
        proptest::option::of(any::<u8>()),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        stop(),
    )
        .prop_map(
            |(
                line,
                solutions,
                optimal,
                lower_bound,
                depth_exhausted,
                nodes,
                lookups,
                micros,
                stop,
            )| {
                PositionResult {
                    line,
                    solutions,
                    optimal,
                    lower_bound,
                    depth_exhausted,
                    nodes,
                    lookups,
                    micros,
                    stop,
                }
            },
        );
    let sub = (
        any::<u32>(),
        proptest::collection::vec(moves(), 0..3),
        any::<u64>(),
        any::<u64>(),
        stop(),
    )
        .prop_map(|(prefix, solutions, nodes, lookups, stop)| SubtreeResult {
            prefix,
            solutions,
            nodes,
            lookups,
            stop,
        });
    let answer = prop_oneof![
        pos.prop_map(Ok),
        (any::<u64>(), job_error()).prop_map(|(line, error)| Err(PositionError { line, error })),
    ];
    let output = prop_oneof![
        proptest::collection::vec(answer, 0..4).prop_map(|v| Ok(JobOutput::Batch(v))),
        proptest::collection::vec(sub, 0..4).prop_map(|v| Ok(JobOutput::Subtrees(v))),
        job_error().prop_map(Err),
    ];
    (any::<u64>(), any::<u32>(), any::<u64>(), output).prop_map(|(id, attempt, micros, output)| {
        JobResult {
            id: JobId(id),
            attempt,
            micros,
            output,
        }
    })
}

fn record() -> impl Strategy<Value = Record> {
    let solved = (
        proptest::collection::vec(moves(), 0..3),
        any::<bool>(),
        proptest::option::of(any::<u8>()),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        stop(),
    )
        .prop_map(
            |(solutions, optimal, depth_exhausted, nodes, lookups, micros, stop)| {
                Ok(Solved {
                    solutions,
                    optimal,
                    depth_exhausted,
                    nodes,
                    lookups,
                    micros,
                    stop,
                })
            },
        );
    let good = (any::<u64>(), "[URFDLB2' ]{0,30}", solved);
    let bad_text = (any::<u64>(), "[A-Za-z0-9' ]{1,20}").prop_filter_map(
        "the text must not parse",
        |(id, text)| {
            Position::parse(&text).err().map(|e| Record {
                line: id,
                input: text,
                outcome: Err(RecordError::from(e)),
            })
        },
    );
    let kind = prop_oneof![
        Just(BadLineKind::Notation),
        Just(BadLineKind::Facelets),
        Just(BadLineKind::Unsolvable),
        Just(BadLineKind::TooLong),
    ];
    let bad_line = (any::<u64>(), kind, ".{0,30}").prop_map(|(line, kind, message)| Record {
        line,
        input: "?".into(),
        outcome: Err(RecordError::Parse(BadLine { kind, message })),
    });
    prop_oneof![
        good.prop_map(|(line, input, outcome)| Record {
            line,
            input,
            outcome
        }),
        bad_text,
        bad_line,
        any::<u64>().prop_map(|line| Record {
            line,
            input: String::new(),
            outcome: Err(RecordError::NotUtf8),
        }),
        (any::<u64>(), job_error()).prop_map(|(line, e)| Record {
            line,
            input: "R U".into(),
            outcome: Err(RecordError::Job(e)),
        }),
    ]
}

/// Decodes bytes as a wire message and then as a domain value: either may fail, neither
/// may panic, and whatever decodes re-encodes to a value that decodes the same.
fn decode_any<W, D>(bytes: &[u8])
where
    W: Message + Default + for<'a> From<&'a D>,
    D: TryFrom<W, Error = DecodeError> + PartialEq + std::fmt::Debug,
{
    let Ok(wire) = W::decode(bytes) else { return };
    if let Ok(value) = D::try_from(wire) {
        let again = D::try_from(W::from(&value)).expect("an encoded value decodes");
        assert_eq!(again, value);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn jobs_round_trip(j in job()) {
        let w = w::Job::from(&j);
        let bytes = w.encode_to_vec();
        let back = Job::try_from(w::Job::decode(bytes.as_slice()).unwrap()).unwrap();
        prop_assert_eq!(back, j);
    }

    #[test]
    fn results_round_trip(r in job_result()) {
        let w = w::JobResult::from(&r);
        let back = JobResult::try_from(w::JobResult::decode(w.encode_to_vec().as_slice()).unwrap()).unwrap();
        prop_assert_eq!(back, r);
    }

    #[test]
    fn records_round_trip(r in record()) {
        let back = Record::try_from(w::Record::from(&r)).unwrap();
        prop_assert_eq!(back, r);
    }

    #[test]
    fn settings_round_trip(s in settings()) {
        prop_assert_eq!(Settings::try_from(w::Settings::from(&s)).unwrap(), s);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        decode_any::<w::Job, Job>(&bytes);
        decode_any::<w::JobResult, JobResult>(&bytes);
        decode_any::<w::Record, Record>(&bytes);
        decode_any::<w::Settings, Settings>(&bytes);
        decode_any::<w::JobError, JobError>(&bytes);
        decode_any::<w::SettingsError, SettingsError>(&bytes);
    }

    #[test]
    fn arbitrary_batch_answers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let Ok(wire) = w::PositionResult::decode(bytes.as_slice()) else { return Ok(()) };
        if let Ok(a) = answer_from(wire) {
            prop_assert_eq!(answer_from(answer_wire(&a)).unwrap(), a);
        }
    }

    #[test]
    fn arbitrary_positions_are_checked(bytes in proptest::collection::vec(any::<u8>(), 0..50)) {
        match position_from("p", &bytes) {
            Ok(p) => prop_assert_eq!(position_bytes(&p), bytes),
            Err(DecodeError::PositionLength { len, .. }) => prop_assert_ne!(len, 40),
            Err(DecodeError::Position { .. }) => prop_assert_eq!(bytes.len(), 40),
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
    }

    #[test]
    fn arbitrary_settings_fields(method in any::<i32>(), min in any::<u32>(), max in any::<u32>()) {
        let w = w::Settings { method, min_length: min, max_length: max, ..Default::default() };
        match Settings::try_from(w) {
            Ok(s) => {
                prop_assert!(method == 1 || method == 2);
                prop_assert_eq!(u32::from(s.min_length), min);
                prop_assert_eq!(u32::from(s.max_length), max);
            }
            Err(DecodeError::UnknownEnum { value, .. }) => prop_assert_eq!(value, method),
            Err(DecodeError::OutOfRange { value, .. }) => prop_assert!(value > 255),
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
    }
}

#[test]
fn bad_messages_are_typed_errors() {
    let no_work = w::Job {
        id: 1,
        ..Default::default()
    };
    assert_eq!(
        Job::try_from(no_work),
        Err(DecodeError::Missing("job.work"))
    );
    let bad_move = w::JobResult {
        output: Some(w::job_result::Output::Subtrees(w::SubtreesOutput {
            results: vec![w::SubtreeResult {
                solutions: vec![vec![3, 18]],
                stop: w::Stop::Exhausted.into(),
                ..Default::default()
            }],
        })),
        ..Default::default()
    };
    assert_eq!(
        JobResult::try_from(bad_move),
        Err(DecodeError::Move {
            field: "subtree.solutions",
            value: 18
        })
    );
    let mut twisted = position_bytes(&Position::SOLVED);
    twisted[8] = 1; // one corner twisted alone
    assert!(matches!(
        position_from("p", &twisted),
        Err(DecodeError::Position { .. })
    ));
    let unknown_kind = w::Record {
        id: 7,
        input: "R U".into(),
        outcome: Some(w::record::Outcome::Error(w::RecordError {
            kind: Some(w::record_error::Kind::BadLine(w::BadLine {
                kind: 9,
                message: "whatever".into(),
            })),
        })),
    };
    assert_eq!(
        Record::try_from(unknown_kind),
        Err(DecodeError::UnknownEnum {
            field: "record.error.bad_line.kind",
            value: 9
        })
    );
    let unspecified_stop = w::PositionResult::default();
    assert_eq!(
        answer_from(unspecified_stop),
        Err(DecodeError::UnknownEnum {
            field: "result.stop",
            value: 0
        })
    );
    let long = w::SettingsError {
        kind: Some(w::settings_error::Kind::MaxLength(300)),
    };
    assert!(matches!(
        SettingsError::try_from(long),
        Err(DecodeError::OutOfRange { value: 300, .. })
    ));
}

#[test]
fn a_subtree_job_of_too_many_piece_levels_is_refused() {
    let job = |pieces| w::Job {
        id: 1,
        attempt: 1,
        table: "h48h0k4".into(),
        work: Some(w::job::Work::Subtrees(w::SubtreeWork {
            position: position_bytes(&Position::SOLVED),
            depth: 12,
            pieces,
            ..Default::default()
        })),
    };
    assert!(Job::try_from(job(3)).is_ok());
    assert_eq!(
        Job::try_from(job(4)),
        Err(DecodeError::OutOfRange {
            field: "job.subtrees.pieces",
            value: 4,
            max: 3
        })
    );
    assert!(Job::try_from(job(u32::MAX)).is_err());
}

#[test]
fn a_handback_crosses_the_wire() {
    let split = vec![
        crate::pieces::PieceSplit {
            piece: 3,
            entered: vec![],
        },
        crate::pieces::PieceSplit {
            piece: 5,
            entered: vec![14, 2, 9],
        },
    ];
    for kept in [None, Some(0), Some(7), Some(u32::MAX)] {
        for split in [Vec::new(), split.clone()] {
            let h = crate::Handback {
                job: JobId(9),
                attempt: 2,
                kept,
                split,
            };
            let back = crate::Handback::try_from(w::Handback::from(&h));
            assert_eq!(back.ok(), Some(h));
        }
    }
    // More entries than a job can have pieces is refused, not allocated for.
    let flood = w::Handback {
        job: 9,
        attempt: 2,
        kept: Some(1),
        split: vec![w::PieceSplit::default(); crate::pieces::MAX_JOB_PIECES + 1],
    };
    match crate::Handback::try_from(flood) {
        Err(DecodeError::OutOfRange { field, .. }) => assert_eq!(field, "handback.split"),
        other => panic!("{other:?}"),
    }
    let deep = w::Handback {
        job: 9,
        attempt: 2,
        kept: Some(1),
        split: vec![w::PieceSplit {
            piece: 0,
            entered: vec![1; crate::pieces::SPLIT_LEVELS + 1],
        }],
    };
    match crate::Handback::try_from(deep) {
        Err(DecodeError::OutOfRange { field, .. }) => {
            assert_eq!(field, "handback.split.entered")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_bad_line_crosses_the_wire_with_its_kind_and_message() {
    // What the client gets is what the server's parser said, without parsing again.
    for (text, kind) in [
        ("R U Q2", BadLineKind::Notation),
        (
            "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBX",
            BadLineKind::Facelets,
        ),
    ] {
        let e = Position::parse(text).unwrap_err();
        let r = Record {
            line: 3,
            input: text.into(),
            outcome: Err(RecordError::from(e.clone())),
        };
        let back = Record::try_from(w::Record::from(&r)).unwrap();
        match back.outcome {
            Err(RecordError::Parse(b)) => {
                assert_eq!(b.kind, kind);
                assert_eq!(b.message, e.to_string());
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn every_error_maps_to_a_status_code() {
    use crate::Error;
    use tonic::Code;
    let cases = [
        (
            Error::Decode(DecodeError::Missing("x")),
            Code::InvalidArgument,
        ),
        (Error::Unauthenticated, Code::Unauthenticated),
        (
            Error::TableMismatch {
                file: "cocsep".into(),
                peer: 1,
                ours: 2,
            },
            Code::FailedPrecondition,
        ),
        (Error::ShuttingDown, Code::Unavailable),
        (
            Error::FileNotServed {
                file: "t".into(),
                serving: vec!["cocsep".into()],
            },
            Code::NotFound,
        ),
        (
            Error::FetchOffset {
                file: "t".into(),
                offset: 9,
                bytes: 8,
            },
            Code::OutOfRange,
        ),
        (
            Error::Violation(crate::Violation::NoHello),
            Code::InvalidArgument,
        ),
        (
            Error::Settings(SettingsError::NoSolutions),
            Code::InvalidArgument,
        ),
        (
            Error::UnknownTable {
                name: "x".into(),
                known: vec!["twophase".into()],
            },
            Code::InvalidArgument,
        ),
        (
            Error::FileUnreadable {
                path: "/t".into(),
                reason: "gone".into(),
            },
            Code::Internal,
        ),
        (Error::RegistryPoisoned, Code::Internal),
        (
            Error::MessageTooLarge {
                detail: "found 17000000 bytes".into(),
            },
            Code::ResourceExhausted,
        ),
        (
            Error::Unreadable {
                detail: "failed to decode".into(),
            },
            Code::InvalidArgument,
        ),
    ];
    let texts = [
        (
            Error::Violation(crate::Violation::LineIdsNotIncreasing { id: 3, after: 5 }),
            "protocol violation: line ids must increase: 3 after 5",
        ),
        (
            Error::UnknownTable {
                name: "x".into(),
                known: vec!["twophase".into(), "h48h0k4".into()],
            },
            "unknown table \"x\" (known: twophase, h48h0k4)",
        ),
        (
            Error::FileNotServed {
                file: "t".into(),
                serving: vec!["a".into(), "b".into()],
            },
            "table file \"t\" is not served here (serving: a, b)",
        ),
    ];
    for (e, text) in texts {
        assert_eq!(e.to_string(), text);
    }
    for (e, code) in cases {
        let msg = e.to_string();
        let s = tonic::Status::from(e);
        assert_eq!(s.code(), code);
        assert_eq!(s.message(), msg);
    }
}
