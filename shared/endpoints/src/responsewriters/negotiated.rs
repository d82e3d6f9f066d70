//! Answers in the negotiated form, after upstream's `WriteObjectNegotiated` and
//! `transformResponseObject`: the media type an `Accept` header (or `?pretty`, or a human
//! user agent) asks for, and an object or list as JSON (compact or indented, lists
//! streamed), YAML, protobuf, a Table or PartialObjectMetadata.

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};
use kas_apimachinery::Status;
use kas_apimachinery::runtime::serializer;
use kas_registry::error::Result;
use serde_json::Value;

use crate::Body;
use crate::negotiation::{self, MediaType, MediaTypeOptions, ResourceRestrictions};
use crate::responsewriters::encode;
use crate::responsewriters::list_stream::ListStream;
use crate::responsewriters::partial::Partial;
use crate::responsewriters::protobuf as proto;
use crate::responsewriters::response;

/// The negotiated answer type; `Ok(true)` in the second place for a Table.
pub fn negotiate(headers: &HeaderMap, query: Option<&str>) -> Result<(MediaTypeOptions, bool)> {
    let opts = negotiate_media(headers, query, true)?;
    let table = opts.convert.as_ref().is_some_and(|gvk| gvk.kind == "Table");
    Ok((opts, table))
}

/// The negotiated answer type when a Table is (`table_convertor`) or is not offered.
/// The only other conversion served is PartialObjectMetadata, transformed by `partial`
/// where the answer is encoded; the restrictions let nothing else through, and anything
/// that still arrives is refused rather than ignored.
pub fn negotiate_media(
    headers: &HeaderMap,
    query: Option<&str>,
    table_convertor: bool,
) -> Result<MediaTypeOptions> {
    let header = |h: http::HeaderName| headers.get(h).and_then(|v| v.to_str().ok());
    let restrictions = ResourceRestrictions {
        table_convertor,
        ..ResourceRestrictions::default()
    };
    let opts = negotiation::negotiate_output_media_type(
        header(http::header::ACCEPT),
        query,
        header(http::header::USER_AGENT),
        &restrictions,
    )?;
    match &opts.convert {
        None => Ok(opts),
        Some(gvk) if table_convertor && gvk.kind == "Table" => Ok(opts),
        Some(gvk) if Partial::from_gvk(gvk).is_some() => Ok(opts),
        Some(gvk) => Err(Status::not_acceptable(&[&format!("as={}", gvk.kind)]).into()),
    }
}

/// A `Status` object as the answer of a successful request (a delete, a binding), in the
/// negotiated media type.
pub fn status(code: StatusCode, status: &Value, out: &MediaTypeOptions) -> Response<Body> {
    if out.accepted == MediaType::Protobuf {
        let bytes = kas_apimachinery::protobuf::encode_object(
            status,
            &kas_api::meta::v1::STATUS,
            "v1",
            "Status",
        )
        .unwrap_or_default();
        return protobuf(code, bytes.into());
    }
    response::json(code, serde_json::to_vec(status).unwrap_or_default().into())
}

/// A protobuf answer.
pub fn protobuf(code: StatusCode, bytes: Bytes) -> Response<Body> {
    let mut resp = response::json(code, bytes);
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(proto::MEDIA_TYPE),
    );
    resp
}

/// One object of the resource in the negotiated media type, from its JSON (with type).
pub fn render_object(
    d: &kas_registry::ResourceDescriptor,
    opts: &MediaTypeOptions,
    code: StatusCode,
    json_bytes: Bytes,
) -> Result<Response<Body>> {
    if let Some(p) = Partial::from_options(opts) {
        return Ok(encoded(
            opts,
            code,
            p.object(d, opts.accepted, &json_bytes)?,
        ));
    }
    if opts.accepted == MediaType::Protobuf {
        return Ok(protobuf(code, proto::object_from_json(d, &json_bytes)?));
    }
    Ok(render(opts, code, json_bytes))
}

/// Bytes already in the negotiated media type: protobuf as they are, JSON through
/// [`render`].
pub fn encoded(opts: &MediaTypeOptions, code: StatusCode, bytes: Bytes) -> Response<Body> {
    if opts.accepted == MediaType::Protobuf {
        return protobuf(code, bytes);
    }
    render(opts, code, bytes)
}

/// A list (not a Table) in the negotiated media type. JSON, pretty or not, streams from
/// the items ([`ListStream`]); the other forms are built whole.
pub fn render_list(
    d: &kas_registry::ResourceDescriptor,
    opts: &MediaTypeOptions,
    result: kas_storage::ListResult,
) -> Result<Response<Body>> {
    let bytes = if let Some(p) = Partial::from_options(opts) {
        p.list(d, opts.accepted, &result)?
    } else if opts.accepted == MediaType::Protobuf {
        proto::list(d, &result)?
    } else if opts.accepted == MediaType::Json {
        let stream = ListStream::new(d, result);
        let stream = if opts.pretty { stream.pretty() } else { stream };
        let length = http_body::Body::size_hint(&stream).exact();
        let mut resp = response::json(StatusCode::OK, Bytes::new());
        *resp.body_mut() = crate::body::boxed(stream);
        if let Some(n) = length {
            resp.headers_mut()
                .insert(http::header::CONTENT_LENGTH, http::HeaderValue::from(n));
        }
        return Ok(resp);
    } else {
        encode::list(d, &result)
    };
    Ok(encoded(opts, StatusCode::OK, bytes))
}

/// JSON bytes in the negotiated media type (JSON or YAML; protobuf answers are encoded
/// from their objects by the callers).
pub fn render(opts: &MediaTypeOptions, code: StatusCode, json_bytes: Bytes) -> Response<Body> {
    if opts.accepted == MediaType::Yaml
        && let Ok(v) = serde_json::from_slice::<Value>(&json_bytes)
        && let Ok(yaml) = serializer::encode_yaml(&v)
    {
        let mut resp = response::json(code, yaml);
        resp.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/yaml"),
        );
        return resp;
    }
    if opts.pretty {
        return response::json(code, serializer::indent_json(&json_bytes));
    }
    response::json(code, json_bytes)
}
