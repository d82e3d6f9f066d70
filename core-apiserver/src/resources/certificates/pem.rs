//! PEM blocks as Go's `encoding/pem` decodes them, and the two checks upstream's CSR
//! validation makes of them: `ParseCSR` with `CheckSignature` (`validateCSR`) and
//! `validateCertificate`.
//!
//! The DER parse and signature errors are Go's `crypto/x509` texts where they are known
//! (`x509: ECDSA verification failure`); a malformed DER request gets one fixed text,
//! where Go reports the `encoding/asn1` error it hit.

use base64::Engine as _;
use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::prelude::FromDer;
use x509_parser::x509::X509Name;

/// One decoded PEM block.
#[derive(Debug, PartialEq)]
pub struct Block {
    pub label: String,
    pub headers: Vec<(String, String)>,
    pub bytes: Vec<u8>,
}

/// Go's `pem.Decode`: the first block in `data` and what follows it, `None` when there is
/// no (well-formed) block.
pub fn decode(mut data: &[u8]) -> Option<(Block, &[u8])> {
    const BEGIN: &[u8] = b"-----BEGIN ";
    loop {
        let start = if data.starts_with(BEGIN) {
            0
        } else {
            find(data, b"\n-----BEGIN ")? + 1
        };
        let rest = &data[start + BEGIN.len()..];
        // Whatever goes wrong with this block, Go looks for the next one after it.
        data = rest;
        let (type_line, after) = line(rest);
        let Some(label) = trim_end(type_line).strip_suffix(b"-----") else {
            continue;
        };
        if let Some(found) = parse_block(label, after) {
            return Some(found);
        }
    }
}

fn parse_block<'a>(label: &[u8], mut rest: &'a [u8]) -> Option<(Block, &'a [u8])> {
    let mut headers = Vec::new();
    loop {
        if rest.is_empty() {
            return None;
        }
        let (l, next) = line(rest);
        let Some(colon) = l.iter().position(|&b| b == b':') else {
            break;
        };
        let key = String::from_utf8_lossy(trim(&l[..colon])).into_owned();
        let value = String::from_utf8_lossy(trim(&l[colon + 1..])).into_owned();
        headers.push((key, value));
        rest = next;
    }
    let mut end = b"-----END ".to_vec();
    end.extend_from_slice(label);
    end.extend_from_slice(b"-----");
    let (body, after) = if rest.starts_with(&end[..]) {
        (&rest[..0], &rest[end.len()..])
    } else {
        let mut needle = b"\n".to_vec();
        needle.extend_from_slice(&end);
        let at = find(rest, &needle)?;
        (&rest[..at], &rest[at + needle.len()..])
    };
    // The end line may carry only whitespace after it.
    let (end_rest, after) = line(after);
    if !trim(end_rest).is_empty() {
        return None;
    }
    let text: Vec<u8> = body
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&text)
        .ok()?;
    let label = String::from_utf8_lossy(label).into_owned();
    Some((
        Block {
            label,
            headers,
            bytes,
        },
        after,
    ))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A line without its end, and what follows.
fn line(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == b'\n') {
        Some(i) => {
            let l = &data[..i];
            (l.strip_suffix(b"\r").unwrap_or(l), &data[i + 1..])
        }
        None => (data, &[]),
    }
}

fn trim_end(b: &[u8]) -> &[u8] {
    let n = b
        .iter()
        .rposition(|c| !matches!(c, b' ' | b'\t'))
        .map_or(0, |i| i + 1);
    &b[..n]
}

fn trim(b: &[u8]) -> &[u8] {
    let b = trim_end(b);
    let n = b
        .iter()
        .position(|c| !matches!(c, b' ' | b'\t'))
        .unwrap_or(b.len());
    &b[n..]
}

/// Upstream `validateCSR`: `ParseCSR`, then `CheckSignature`; the error's text.
pub fn check_csr(pem: &[u8]) -> Result<(), String> {
    let block = match decode(pem) {
        Some((block, _)) if block.label == "CERTIFICATE REQUEST" => block,
        _ => return Err("PEM block type must be CERTIFICATE REQUEST".to_owned()),
    };
    let csr = match X509CertificationRequest::from_der(&block.bytes) {
        Ok(([], csr)) => csr,
        Ok(_) => return Err("asn1: syntax error: trailing data".to_owned()),
        Err(_) => return Err("x509: malformed certificate request".to_owned()),
    };
    csr.verify_signature().map_err(|_| {
        let algorithm = csr
            .certification_request_info
            .subject_pki
            .algorithm
            .algorithm
            .to_id_string();
        match algorithm.as_str() {
            "1.2.840.10045.2.1" => "x509: ECDSA verification failure",
            "1.3.101.112" => "x509: Ed25519 verification failure",
            "1.2.840.113549.1.1.1" => "crypto/rsa: verification error",
            _ => "x509: cannot verify signature: algorithm unimplemented",
        }
        .to_owned()
    })
}

/// Upstream `ParseCSR` (without the signature check), answering what `read` takes of the
/// request's subject; the error's text.
fn csr_subject<T>(pem: &[u8], read: impl FnOnce(&X509Name<'_>) -> T) -> Result<T, String> {
    let block = match decode(pem) {
        Some((block, _)) if block.label == "CERTIFICATE REQUEST" => block,
        _ => return Err("PEM block type must be CERTIFICATE REQUEST".to_owned()),
    };
    let csr = match X509CertificationRequest::from_der(&block.bytes) {
        Ok(([], csr)) => csr,
        Ok(_) => return Err("asn1: syntax error: trailing data".to_owned()),
        Err(_) => return Err("x509: malformed certificate request".to_owned()),
    };
    Ok(read(&csr.certification_request_info.subject))
}

/// The subject's organizations (the groups a client certificate from the request would
/// carry).
pub fn csr_organizations(pem: &[u8]) -> Result<Vec<String>, String> {
    csr_subject(pem, |subject| {
        subject
            .iter_organization()
            .filter_map(|o| o.as_str().ok().map(str::to_owned))
            .collect()
    })
}

/// The subject's common name (Go's `Subject.CommonName`: the last one), empty without one.
pub fn csr_common_name(pem: &[u8]) -> Result<String, String> {
    csr_subject(pem, |subject| {
        subject
            .iter_common_name()
            .filter_map(|c| c.as_str().ok())
            .last()
            .unwrap_or_default()
            .to_owned()
    })
}

/// Upstream `validateCertificate`: nothing, or CERTIFICATE blocks without headers that
/// each hold at least one certificate.
pub fn check_certificates(mut pem: &[u8]) -> Result<(), String> {
    if pem.is_empty() {
        return Ok(());
    }
    let mut blocks = 0;
    while let Some((block, rest)) = decode(pem) {
        if block.label != "CERTIFICATE" {
            let label = kas_apimachinery::golang::strconv::quote(&block.label);
            return Err(format!(
                "only CERTIFICATE PEM blocks are allowed, found {label}"
            ));
        }
        if !block.headers.is_empty() {
            return Err("no PEM block headers are permitted".to_owned());
        }
        blocks += 1;
        let mut der = &block.bytes[..];
        let mut certs = 0;
        while !der.is_empty() {
            match x509_parser::parse_x509_certificate(der) {
                Ok((rest, _)) => der = rest,
                Err(_) => return Err("x509: malformed certificate".to_owned()),
            }
            certs += 1;
        }
        if certs == 0 {
            return Err("found CERTIFICATE PEM block containing 0 certificates".to_owned());
        }
        pem = rest;
    }
    if blocks == 0 {
        return Err("must contain at least one CERTIFICATE PEM block".to_owned());
    }
    Ok(())
}
