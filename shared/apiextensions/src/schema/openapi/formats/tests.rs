//! Examples from strfmt's and govalidator's tests.

use super::*;

#[test]
fn stripping_keeps_only_validated_formats() {
    assert_eq!(strip_unsupported("int32"), "");
    assert_eq!(strip_unsupported("double"), "");
    assert_eq!(strip_unsupported("k8s-short-name"), "");
    assert_eq!(strip_unsupported("date-time"), "date-time");
    assert_eq!(strip_unsupported("uuid"), "uuid");
    assert!(contains("date-time") && contains("byte") && !contains("") && !contains("int64"));
}

#[test]
fn each_format_accepts_and_refuses() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "hostname",
            &["example.com", "a", "xn--bcher-kva.example", "ünicode.de"],
            &["-a.com", "a..b", "a.b-", "a_b.com"],
        ),
        (
            "ipv4",
            &["1.2.3.4", "010.0.0.1"],
            &["1.2.3", "::1", "256.1.1.1"],
        ),
        (
            "ipv6",
            &["::1", "2001:db8::1", "::ffff:1.2.3.4"],
            &["1.2.3.4", "::g", ""],
        ),
        (
            "cidr",
            &["10.0.0.0/8", "fd00::/64"],
            &["10.0.0.0", "10.0.0.0/33"],
        ),
        (
            "uuid",
            &[
                "a8098c1a-f86e-11da-bd1a-00112444be1e",
                "A8098C1AF86E11DABD1A00112444BE1E",
            ],
            &["a8098c1a-f86e-11da-bd1a-00112444be1"],
        ),
        (
            "uuid4",
            &["f47ac10b-58cc-4372-a567-0e02b2c3d479"],
            &["a8098c1a-f86e-11da-bd1a-00112444be1e"],
        ),
        (
            "isbn10",
            &["3836221195", "3-8362-2119-5", "3 423 21412 0", "080442957X"],
            &["3836221194", "38362211"],
        ),
        (
            "isbn13",
            &["9783836221191", "978-3-8362-2119-1"],
            &["9783836221190"],
        ),
        ("isbn", &["3836221195", "9783836221191"], &["123"]),
        (
            "creditcard",
            &["4111 1111 1111 1111", "375556917985515"],
            &["4111111111111112", "foo"],
        ),
        (
            "ssn",
            &["191 60 2869", "191-60-2869"],
            &["191602869", "19160286x"],
        ),
        ("hexcolor", &["#fff", "fafafa"], &["#ffff", "#ggg"]),
        (
            "rgbcolor",
            &["rgb(0,31,255)", "rgb( 1 , 2 , 3 )"],
            &["rgb(256,0,0)", "rgb(0,0)"],
        ),
        (
            "byte",
            &["aGVsbG8=", "aGVsbG8h"],
            &["", "aGVsbG8", "a===", "aGV sbG8="],
        ),
        ("password", &["", "anything"], &[]),
        (
            "date",
            &["2024-02-29", "1999-12-31"],
            &[
                "2023-02-29",
                "2024-13-01",
                "24-01-01",
                "2024-1-01",
                "2024-01-01T",
            ],
        ),
        (
            "date-time",
            &["2024-01-02T10:20:30Z", "2024-01-02t10:20:30.123+01:00"],
            &[
                "2024-01-02T24:00:00Z",
                "2024-01-02 10:20:30Z",
                "2024-01-02T10:20:30",
            ],
        ),
        (
            "duration",
            &["1h30m", "3 days", "5 minutes", "1d", "10 nano"],
            &["forever", "h1", ""],
        ),
        (
            "bsonobjectid",
            &["507f1f77bcf86cd799439011"],
            &["507f1f77bcf86cd79943901", "507f1f77bcf86cd79943901z"],
        ),
        ("uri", &["http://x/y"], &["x"]),
        ("email", &["a@b"], &["a"]),
        ("mac", &["00:00:5e:00:53:01"], &["0:0:5e:0:53:1"]),
    ];
    for (format, good, bad) in cases {
        for s in *good {
            assert!(validates(format, s), "{format}: {s} should be valid");
        }
        for s in *bad {
            assert!(!validates(format, s), "{format}: {s} should be invalid");
        }
    }
}

#[test]
fn every_pattern_compiles() {
    for re in [
        &HOSTNAME,
        &UUID,
        &UUID3,
        &UUID4,
        &UUID5,
        &CREDIT_CARD,
        &HEX_COLOR,
        &RGB_COLOR,
        &BASE64,
        &SSN,
        &DATE_TIME,
        &DURATION_PART,
    ] {
        assert!(re.is_some());
    }
}
