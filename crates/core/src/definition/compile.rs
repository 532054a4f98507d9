//! Compiling a definition: the TOML file ([`raw`](super::raw)) checked and turned into the model
//! the engine reads ([`Definition`]), one function per section of the file.
//!
//! Every check that can fail names the file, line, column and field of the offending text
//! ([`Error::Definition`], exit 2). The checks run in the order of the sections below, so a file
//! with several mistakes is reported at the same one each time.

use rustc_hash::FxHashMap as HashMap;
use std::sync::OnceLock;

use toml::Spanned;

use super::raw::{
    OneOrMany, RawArray, RawBlock, RawDefinition, RawGroups, RawItlRule, RawKey, RawRequests, RawRow, RawTrailer,
    RawVariant,
};
use super::{
    ArraySpec, BlockSpec, Definition, DetectSpec, FirstBytes, GroupSpec, Hole, ItlRule, LabelPattern, Pattern,
    RequestsSpec, RowSpec, SemanticsSpec, TableSpec, Target, TrailerSpec, Variant, arg_label,
};
use crate::error::{Error, line_col};
use crate::lex::normalize_label;
use crate::report::{Format, StatKey};
use crate::vocabulary::{self, Kind, Unit};

/// Parse and check one definition. `origin` names it in errors. Its patterns are compiled now,
/// so that a bad one is an error here.
pub fn parse(text: &str, origin: &str) -> Result<Definition, Error> {
    parse_with(Source { text, origin, eager: true })
}

/// A built-in definition: its patterns are compiled on first use (`lazy.rs`).
pub(super) fn parse_builtin(text: &str, origin: &str) -> Result<Definition, Error> {
    parse_with(Source { text, origin, eager: false })
}

fn parse_with(cx: Source) -> Result<Definition, Error> {
    let origin = cx.origin;
    let raw = read_toml(&cx)?;
    let format = format(&cx, &raw.format)?;
    check_id(&cx, &raw.id)?;
    let block = raw.block.as_ref().map(|b| block(&cx, b)).transpose()?;
    if format.is_text() && block.is_none() {
        return Err(cx.err_at(0, "block", "a stdout or result-csv definition needs a [block]".into()));
    }
    let mut rows = rows_of(&cx, &raw.row, "row")?;
    let context = rows_of(&cx, &raw.context, "context")?;
    let footer = rows_of(&cx, &raw.footer, "footer")?;
    rows.append(&mut keys(&cx, &raw.key)?);
    if !format.is_text() && raw.detect.is_none() {
        return Err(cx.err_at(0, "detect", "a JSON format needs a [detect] table (keys_all / keys_any)".into()));
    }
    let requests = requests(&cx, &raw.requests)?;
    let variants = variants(&cx, raw.variant, &context)?;
    let itl_rules = itl_rules(&cx, raw.semantics.itl_rule, &variants)?;
    let trailers = trailers(&cx, &raw.trailer, &variants)?;
    let (label_index, templated) = label_index(&rows);
    let fold = raw.fold.as_ref().map(|f| fold(&cx, f)).transpose()?;

    Ok(Definition {
        id: raw.id.into_inner(),
        tool: raw.tool,
        format,
        description: raw.description,
        note: raw.note,
        origin: origin.to_string(),
        block,
        semantics: SemanticsSpec {
            missing_e2e_hint: raw.semantics.missing_e2e_hint,
            itl: raw.semantics.itl.map(Into::into),
            itl_why: raw.semantics.itl_why,
            output_tokens: raw.semantics.output_tokens,
            e2e_end: raw.semantics.e2e_end,
            rates: raw.semantics.rates,
            percentiles: raw.semantics.percentiles,
            tpot_weighting: raw.semantics.tpot_weighting,
            itl_rules,
        },
        variants,
        context,
        args_requires: raw.args.map(|a| a.requires).unwrap_or_default(),
        rows,
        detect: raw.detect.map(|d| DetectSpec {
            keys_all: d.keys_all,
            keys_any: d.keys_any,
            min_keys: d.min_keys.unwrap_or(if format == Format::Report { 0 } else { super::MIN_KEYS }),
        }),
        requests,
        strict_types: raw.strict_types,
        runs_at: raw.runs_at,
        unit_key: raw.unit_key,
        row_finder: OnceLock::new(),
        trailers,
        footer,
        fold,
        label_index,
        templated,
    })
}

/// The text being compiled and where it came from: what an error points into.
struct Source<'a> {
    text: &'a str,
    origin: &'a str,
    /// Compile its patterns now (a definition the user gave), not on first use (a built-in).
    eager: bool,
}

impl Source<'_> {
    /// An error at byte `offset` of the text, about `field`.
    fn err_at(&self, offset: usize, field: &str, message: String) -> Error {
        let (line, column) = line_col(self.text, offset);
        Error::Definition { file: self.origin.to_string(), line, column, field: field.to_string(), message }
    }

    /// A regular expression written in the file.
    fn regex(&self, s: &Spanned<String>, field: &str) -> Result<Pattern, Error> {
        self.pattern(s.get_ref().clone(), s.span().start, field)
    }

    /// A pattern made from the file's text at byte `offset`, compiled now or on first use.
    fn pattern(&self, text: String, offset: usize, field: &str) -> Result<Pattern, Error> {
        Pattern::new(text, self.eager).map_err(|e| self.err_at(offset, field, format!("bad regular expression: {e}")))
    }

    /// A canonical figure named in the file.
    fn target(&self, s: &Spanned<String>, field: &str) -> Result<Target, Error> {
        resolve_target(s.get_ref()).map_err(|m| self.err_at(s.span().start, field, m))
    }

    /// A unit named in the file.
    fn unit(&self, u: &Spanned<String>, field: &str) -> Result<Unit, Error> {
        Unit::parse(u.get_ref())
            .ok_or_else(|| self.err_at(u.span().start, field, format!("unknown unit '{}'", u.get_ref())))
    }
}

/// The file as serde reads it; a TOML error names the key it is about when it knows one.
fn read_toml(cx: &Source) -> Result<RawDefinition, Error> {
    toml::from_str(cx.text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        let message = e.message().trim().to_string();
        let field = message
            .split('`')
            .nth(1)
            .filter(|_| message.contains("unknown field") || message.contains("missing field"))
            .unwrap_or("toml")
            .to_string();
        cx.err_at(offset, &field, message)
    })
}

/// `format`: which kind of input the definition reads.
fn format(cx: &Source, format: &Spanned<String>) -> Result<Format, Error> {
    Ok(match format.get_ref().as_str() {
        "stdout" => Format::Stdout,
        "result-json" => Format::ResultJson,
        "result-jsonl" => Format::ResultJsonl,
        "report" => Format::Report,
        "result-csv" => Format::ResultCsv,
        other => {
            return Err(cx.err_at(
                format.span().start,
                "format",
                format!("unknown format '{other}' (stdout, result-json, result-jsonl, result-csv, report)"),
            ));
        }
    })
}

/// `id`: letters, digits, `-` and `.` (it names the parser in every report).
fn check_id(cx: &Source, id: &Spanned<String>) -> Result<(), Error> {
    if id.get_ref().is_empty() || !id.get_ref().chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.') {
        return Err(cx.err_at(id.span().start, "id", "an id is made of letters, digits, '-' and '.'".into()));
    }
    Ok(())
}

/// `[block]`: how a text block is found, divided and closed.
fn block(cx: &Source, b: &RawBlock) -> Result<BlockSpec, Error> {
    if b.end.is_none() && b.end_after_label.is_none() && b.table.is_none() {
        return Err(cx.err_at(
            b.banner.span().start,
            "block",
            "a block needs `end`, `end_after_label` or a [block.table]".into(),
        ));
    }
    let table = b.table.as_ref().map(|t| TableSpec {
        cells: t.cells,
        rows: t.rows,
        header_rows: t.header_rows,
        value_columns: t.value_columns.clone(),
        max_noise: t.max_noise.max(1),
    });
    let section = b.section.as_ref().map(|s| cx.regex(s, "block.section")).transpose()?;
    let groups = b.groups.as_ref().map(|g| groups(cx, g)).transpose()?;
    let end = b.end.as_ref().map(|s| cx.regex(s, "block.end")).transpose()?;
    let banner = cx.regex(&b.banner, "block.banner")?;
    let header = b.header.as_ref().map(|h| cx.regex(h, "block.header")).transpose()?;
    if let (Some(h), Some(raw)) = (&header, &b.header) {
        // A header line opens a block as a banner does: it must hold text, and a table block
        // reads what it opens (a printed block's rows are not under a column header).
        let empty = regex_syntax::parse(h.as_str()).is_ok_and(|x| x.properties().minimum_len() == Some(0));
        if empty || b.table.is_none() {
            return Err(cx.err_at(
                raw.span().start,
                "block.header",
                format!(
                    "'{}' {}: a header is a table's column header line, for a [block.table]",
                    h.as_str(),
                    if empty { "matches an empty text" } else { "is in a block without [block.table]" }
                ),
            ));
        }
    }
    // A banner that can match no text at all (`^`, `.*`) would open a block at every line
    // (and every such block would be cut off by the next): no format looks like that.
    if regex_syntax::parse(banner.as_str()).is_ok_and(|h| h.properties().minimum_len() == Some(0)) {
        return Err(cx.err_at(
            b.banner.span().start,
            "block.banner",
            format!(
                "'{}' matches an empty text, so it would open a block at every line; a banner must \
                 require the text of the banner line (e.g. '=+ My Results =+')",
                banner.as_str()
            ),
        ));
    }
    Ok(BlockSpec {
        banner,
        header,
        banner_is_row: b.banner_is_row,
        end_first: FirstBytes::of(end.as_ref().map(Pattern::as_str)),
        section_first: FirstBytes::of(section.as_ref().map(Pattern::as_str)),
        end,
        end_after_label: b.end_after_label.as_ref().map(|l| normalize_label(l)),
        section,
        section_strip: b.section_strip.clone(),
        noise_first: FirstBytes::of_any(b.noise.iter().map(|s| s.get_ref().as_str())),
        noise: b.noise.iter().map(|s| cx.regex(s, "block.noise")).collect::<Result<_, _>>()?,
        table,
        groups,
    })
}

/// `[block.groups]`: a header line and the statistic lines under it; the statistic line must
/// name its `key` and `value` captures.
fn groups(cx: &Source, g: &RawGroups) -> Result<GroupSpec, Error> {
    let header = cx.regex(&g.header, "block.groups.header")?;
    let row = cx.regex(&g.row, "block.groups.row")?;
    for name in ["key", "value"] {
        if !row.capture_names().any(|n| n == Some(name)) {
            return Err(cx.err_at(
                g.row.span().start,
                "block.groups.row",
                format!("'{}' needs a capture group named `{name}` ((?P<{name}>...))", row.as_str()),
            ));
        }
    }
    if regex_syntax::parse(header.as_str()).is_ok_and(|h| h.properties().minimum_len() == Some(0)) {
        return Err(cx.err_at(
            g.header.span().start,
            "block.groups.header",
            "a group header must not match an empty line".into(),
        ));
    }
    Ok(GroupSpec { header, row })
}

/// `[[row]]`, `[[context]]` (and `[[key]]`, read as rows): `what` is the section, for errors.
fn rows_of(cx: &Source, raws: &[RawRow], what: &str) -> Result<Vec<RowSpec>, Error> {
    raws.iter().map(|r| row(cx, r, what)).collect()
}

/// One `[[row]]`, `[[context]]` or `[[key]]` entry.
fn row(cx: &Source, r: &RawRow, what: &str) -> Result<RowSpec, Error> {
    if (r.arg || r.when_arg.is_some()) && what != "context" {
        return Err(cx.err_at(
            r.label.span().start,
            &format!("{what}.arg"),
            "`arg` and `when_arg` are for [[context]] entries".into(),
        ));
    }
    if let (false, Some(w)) = (r.arg, &r.when_arg) {
        return Err(cx.err_at(w.span().start, "context.when_arg", "`when_arg` needs `arg = true`".into()));
    }
    let pattern = match &r.pattern {
        None => None,
        Some(p) if what != "context" || r.arg => {
            return Err(cx.err_at(
                p.span().start,
                &format!("{what}.pattern"),
                "`pattern` is for [[context]] entries that are lines, not arguments".into(),
            ));
        }
        Some(p) => Some(
            crate::definition::ContextPattern::compile(p.get_ref())
                .map_err(|m| cx.err_at(p.span().start, "context.pattern", m))?,
        ),
    };
    let label_text = |l: &str| if r.arg { arg_label(l) } else { l.to_string() };
    let mut labels = Vec::new();
    for l in std::iter::once(&r.label).chain(r.aliases.iter()) {
        labels.push(
            LabelPattern::parse(&label_text(l.get_ref()))
                .map_err(|m| cx.err_at(l.span().start, &format!("{what}.label"), m))?,
        );
    }
    let feeds = r.field.as_ref().map(|f| cx.target(f, &format!("{what}.field"))).transpose()?;
    if let (Some(t), Some(f)) = (&feeds, &r.field) {
        check_placeholder(cx, t, f, labels[0].hole(), what)?;
    }
    let unit = match &r.unit {
        None => None,
        Some(u) => {
            let parsed = cx.unit(u, &format!("{what}.unit"))?;
            if let Some(t) = &feeds
                && parsed.factor_to(t.field.unit).is_none()
            {
                return Err(cx.err_at(
                    u.span().start,
                    &format!("{what}.unit"),
                    format!("cannot convert {} into {} for {}", parsed.as_str(), t.field.unit.as_str(), t.field.path),
                ));
            }
            Some(parsed)
        }
    };
    let suffix = r
        .suffix
        .as_ref()
        .map(|x| cx.pattern(format!("^(?:{})$", x.get_ref()), x.span().start, &format!("{what}.suffix")))
        .transpose()?;
    let total = r.total_field.as_ref().map(|f| cx.target(f, &format!("{what}.total_field"))).transpose()?;
    let items = items(cx, r, what, labels[0].hole().is_some(), unit)?;
    Ok(RowSpec {
        label: label_text(r.label.get_ref()),
        labels,
        sections: r.section.as_ref().map(|s| match s {
            OneOrMany::One(x) => vec![x.clone()],
            OneOrMany::Many(v) => v.clone(),
        }),
        target: feeds,
        unit,
        occurrence: r.occurrence,
        suffix,
        total,
        items,
        required: false,
        zero_is_absent: false,
        when_arg: r.when_arg.as_ref().map(|w| {
            let [name, value] = w.get_ref().clone();
            (arg_label(&name), value)
        }),
        pattern,
    })
}

/// `items`: a `[[row]]` whose value is a list, each item feeding its own figure (not `field`,
/// and a label without placeholder); the printed unit must convert into each.
fn items(cx: &Source, r: &RawRow, what: &str, templated: bool, unit: Option<Unit>) -> Result<Vec<Target>, Error> {
    let Some(first) = r.items.first() else { return Ok(Vec::new()) };
    if what != "row" || r.field.is_some() || templated {
        return Err(cx.err_at(
            first.span().start,
            &format!("{what}.items"),
            "`items` is for a [[row]] with neither `field` nor a placeholder in its label".into(),
        ));
    }
    let mut out = Vec::with_capacity(r.items.len());
    for i in &r.items {
        let t = cx.target(i, &format!("{what}.items"))?;
        if t.field.kind == Kind::List || (t.field.kind == Kind::Stat && t.stat.is_none()) {
            return Err(cx.err_at(
                i.span().start,
                &format!("{what}.items"),
                format!(
                    "an item feeds one figure: name a statistic of {} ({}.mean, {}.p99)",
                    t.field.path, t.field.path, t.field.path
                ),
            ));
        }
        if let Some(u) = unit
            && u.factor_to(t.field.unit).is_none()
        {
            return Err(cx.err_at(
                i.span().start,
                &format!("{what}.items"),
                format!("cannot convert {} into {} for {}", u.as_str(), t.field.unit.as_str(), t.field.path),
            ));
        }
        out.push(t);
    }
    Ok(out)
}

/// A row feeding a whole stat block names its statistic in the label (`{stat}`), and a row of a
/// text format feeding a list its position (`{index}`); a JSON key holds the whole list.
fn check_placeholder(
    cx: &Source,
    t: &Target,
    f: &Spanned<String>,
    hole: Option<Hole>,
    what: &str,
) -> Result<(), Error> {
    let wants = match (t.field.kind, t.stat) {
        (Kind::Stat, None) => Some(Hole::Stat),
        (Kind::List, _) if what != "key" => Some(Hole::Index),
        _ => None,
    };
    if wants.is_some() && hole != wants {
        return Err(cx.err_at(
            f.span().start,
            &format!("{what}.field"),
            format!(
                "'{}' needs a label with {}",
                f.get_ref(),
                if wants == Some(Hole::Stat) { "{stat} (or a field ending in .mean, .p99, ...)" } else { "{index}" }
            ),
        ));
    }
    Ok(())
}

/// `[[key]]`: keys of a JSON document, read as rows labelled by the key, plus what only a key
/// has (`required`, `zero_is_absent`).
fn keys(cx: &Source, raw: &[RawKey]) -> Result<Vec<RowSpec>, Error> {
    let as_rows: Vec<RawRow> = raw
        .iter()
        .map(|k| RawRow {
            label: k.key.clone(),
            aliases: k.aliases.clone(),
            section: None,
            field: k.field.clone(),
            unit: k.unit.clone(),
            occurrence: None,
            suffix: None,
            total_field: None,
            items: Vec::new(),
            arg: false,
            when_arg: None,
            pattern: None,
        })
        .collect();
    let mut keys = rows_of(cx, &as_rows, "key")?;
    for (spec, raw_key) in keys.iter_mut().zip(raw) {
        spec.required = raw_key.required;
        spec.zero_is_absent = raw_key.zero_is_absent;
    }
    Ok(keys)
}

/// `[requests]`: the per-request arrays of a JSON format, by role.
fn requests(cx: &Source, raw: &RawRequests) -> Result<RequestsSpec, Error> {
    let array = |a: &Option<RawArray>, role: &str| -> Result<Option<ArraySpec>, Error> {
        let Some(a) = a else { return Ok(None) };
        let unit = a.unit.as_ref().map(|u| cx.unit(u, &format!("requests.{role}.unit"))).transpose()?;
        Ok(Some(ArraySpec { key: a.key.clone(), unit }))
    };
    Ok(RequestsSpec {
        ttft: array(&raw.ttft, "ttft")?,
        latency: array(&raw.latency, "latency")?,
        output_len: array(&raw.output_len, "output_len")?,
        input_len: array(&raw.input_len, "input_len")?,
        gaps: array(&raw.gaps, "gaps")?,
        error: array(&raw.error, "error")?,
        other: raw.other.clone(),
    })
}

/// `[[variant]]`: a version variant may only test context labels the definition looks for.
fn variants(cx: &Source, raw: Vec<RawVariant>, context: &[RowSpec]) -> Result<Vec<Variant>, Error> {
    let mut variants = Vec::new();
    for v in raw {
        for l in v.context_has.iter().chain(v.context_lacks.iter()) {
            let norm = normalize_label(l.get_ref());
            if !context.iter().any(|c| c.matches_label(&norm).is_some()) {
                return Err(cx.err_at(
                    l.span().start,
                    "variant.context_has",
                    format!("'{}' is not a [[context]] label, so it is never looked for", l.get_ref()),
                ));
            }
        }
        let swap = v
            .swap
            .iter()
            .map(|[a, b]| Ok((cx.target(a, "variant.swap")?, cx.target(b, "variant.swap")?)))
            .collect::<Result<Vec<_>, Error>>()?;
        variants.push(Variant {
            id: v.id,
            description: v.description,
            tool: v.tool,
            has: v.has.iter().map(|l| normalize_label(l)).collect(),
            has_any: v.has_any.iter().map(|l| normalize_label(l)).collect(),
            lacks: v.lacks.iter().map(|l| normalize_label(l)).collect(),
            has_section: v.has_section,
            lacks_section: v.lacks_section,
            banner_width: v.banner_width,
            context_has: v.context_has.iter().map(|l| normalize_label(l.get_ref())).collect(),
            context_lacks: v.context_lacks.iter().map(|l| normalize_label(l.get_ref())).collect(),
            reads_args: v.reads_args.unwrap_or(true),
            output_tokens: v.output_tokens,
            e2e_end: v.e2e_end,
            itl: v.itl.map(Into::into),
            rates: v.rates,
            percentiles: v.percentiles,
            tpot_weighting: v.tpot_weighting,
            swap,
            note: v.note,
        });
    }
    Ok(variants)
}

/// Whether each of `named` is the id of one of `variants`; `field` is where they are named.
fn check_variants(cx: &Source, named: &[Spanned<String>], variants: &[Variant], field: &str) -> Result<(), Error> {
    for v in named {
        if !variants.iter().any(|x| &x.id == v.get_ref()) {
            return Err(cx.err_at(v.span().start, field, format!("no variant '{}' in this definition", v.get_ref())));
        }
    }
    Ok(())
}

/// `[[semantics.itl_rule]]`: ITL timing for some backends and variants.
fn itl_rules(cx: &Source, raw: Vec<RawItlRule>, variants: &[Variant]) -> Result<Vec<ItlRule>, Error> {
    let mut itl_rules = Vec::new();
    for r in raw {
        check_variants(cx, &r.variants, variants, "semantics.itl_rule.variants")?;
        let when_present = match &r.when_present {
            Some(p) => Some(cx.target(p, "semantics.itl_rule.when_present")?.field.path),
            None => None,
        };
        itl_rules.push(ItlRule {
            backends: r.backends,
            variants: r.variants.into_iter().map(Spanned::into_inner).collect(),
            when_present,
            itl: r.itl.into(),
            itl_why: r.itl_why,
        });
    }
    Ok(itl_rules)
}

/// `[[trailer]]`: blocks printed right after the result block, for the same run.
fn trailers(cx: &Source, raw: &[RawTrailer], variants: &[Variant]) -> Result<Vec<TrailerSpec>, Error> {
    let mut trailers = Vec::new();
    for t in raw {
        check_variants(cx, &t.variants, variants, "trailer.variants")?;
        trailers.push(TrailerSpec {
            banner: cx.regex(&t.banner, "trailer.banner")?,
            end: cx.regex(&t.end, "trailer.end")?,
            section: t.section.clone(),
            variants: t.variants.iter().map(|v| v.get_ref().clone()).collect(),
            max_gap: t.max_gap,
        });
    }
    Ok(trailers)
}

/// `[fold]`: the key field and the fields its names stand for must be canonical figures.
fn fold(cx: &Source, f: &super::raw::RawFold) -> Result<super::FoldSpec, Error> {
    cx.target(&f.key, "fold.key")?;
    let mut names = Vec::new();
    for (name, field) in &f.names {
        cx.target(field, "fold.names")?;
        names.push((name.clone(), field.get_ref().clone()));
    }
    if f.into.is_empty() {
        return Err(cx.err_at(
            f.key.span().start,
            "fold.into",
            "names no definition whose runs the rows repeat".into(),
        ));
    }
    Ok(super::FoldSpec {
        into: f.into.clone(),
        into_variants: f.into_variants.clone(),
        key: f.key.get_ref().clone(),
        names,
        unset: f.unset.clone(),
    })
}

/// The row specs by literal label, and the specs with a placeholder (both ascending).
fn label_index(rows: &[RowSpec]) -> (HashMap<String, Vec<usize>>, Vec<usize>) {
    let mut label_index: HashMap<String, Vec<usize>> = HashMap::default();
    let mut templated = Vec::new();
    for (i, spec) in rows.iter().enumerate() {
        for p in &spec.labels {
            match p.hole() {
                None => label_index.entry(p.prefix().to_string()).or_default().push(i),
                Some(_) => templated.push(i),
            }
        }
    }
    templated.dedup();
    (label_index, templated)
}

/// `reported.ttft_ms` (a stat block), `reported.e2e_ms.mean` (one statistic), `totals.output_tokens`.
fn resolve_target(path: &str) -> Result<Target, String> {
    if let Some(field) = vocabulary::field(path) {
        return Ok(Target { field, stat: None });
    }
    if let Some((head, last)) = path.rsplit_once('.')
        && let (Some(field), Some(stat)) = (vocabulary::field(head), StatKey::parse(last))
        && field.kind == Kind::Stat
        && last.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.')
    {
        return Ok(Target { field, stat: Some(stat) });
    }
    let near: Vec<&str> = vocabulary::FIELDS
        .iter()
        .map(|f| f.path)
        .filter(|p| {
            p.rsplit('.').next() == path.rsplit('.').next() || p.starts_with(path.split('.').next().unwrap_or(""))
        })
        .take(6)
        .collect();
    Err(format!("'{path}' is not a canonical figure (e.g. {})", near.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_row_needs_key_and_value_captures() {
        let e = err(&format!("{HEAD}[block.groups]\nheader = '^[a-z_]+$'\nrow = '^(\\w+) = (.*)$'\n"));
        assert!(e.contains("block.groups.row") && e.contains("`key`"), "{e}");
        let e = err(&format!("{HEAD}[block.groups]\nheader = '^x*$'\nrow = '^(?P<key>\\w+) = (?P<value>.*)$'\n"));
        assert!(e.contains("block.groups.header"), "{e}");
    }

    #[test]
    fn a_banner_that_matches_empty_text_is_refused() {
        for banner in ["^", ".*", "^$", "(?i)x*", r"\b"] {
            let e = err(&HEAD.replace("banner = 'X'", &format!("banner = '{banner}'")));
            assert!(e.starts_with("t.toml:6:10: block.banner: "), "{banner}: {e}");
            assert!(e.contains("matches an empty text"), "{banner}: {e}");
        }
    }

    fn err(text: &str) -> String {
        parse(text, "t.toml").unwrap_err().to_string()
    }

    const HEAD: &str =
        "id = \"t\"\ntool = \"t\"\nformat = \"stdout\"\ndescription = \"d\"\n[block]\nbanner = 'X'\nend = '^=+$'\n";

    #[test]
    fn errors_name_file_line_and_field() {
        let e = err(&format!("{HEAD}[[row]]\nlabel = \"A:\"\nfield = \"totals.output_tokenz\"\n"));
        assert!(e.starts_with("t.toml:10:9: row.field: 'totals.output_tokenz' is not a canonical figure"), "{e}");
        let e = err(&format!("{HEAD}[[row]]\nlabel = \"A:\"\nfeild = \"totals.output_tokens\"\n"));
        assert!(e.starts_with("t.toml:10:1: feild: unknown field `feild`"), "{e}");
        let e = err(&format!("{HEAD}[[row]]\nlabel = \"A:\"\nfield = \"reported.ttft_ms\"\n"));
        assert!(e.contains("row.field: 'reported.ttft_ms' needs a label with {stat}"), "{e}");
        let e = err(
            "id = \"t\"\ntool = \"t\"\nformat = \"stdout\"\ndescription = \"d\"\n[block]\nbanner = '('\nend = '^=+$'\n",
        );
        assert!(e.starts_with("t.toml:6:10: block.banner: bad regular expression"), "{e}");
        let e = err(&format!("{HEAD}[[row]]\nlabel = \"A:\"\nunit = \"parsecs\"\nfield = \"totals.duration_s\"\n"));
        assert!(e.contains("row.unit: unknown unit 'parsecs'"), "{e}");
        let e = err(&format!("{HEAD}[block.table]\ncells = \"boxes\"\nrows = \"metrics\"\n"));
        assert!(
            e.starts_with("t.toml:9:9: ")
                && e.contains("unknown variant `boxes`, expected one of `ruled`, `bars`, `csv`, `aligned`"),
            "{e}"
        );
    }

    #[test]
    fn items_name_a_figure_each_and_exclude_field() {
        let d = parse(
            &format!("{HEAD}[[row]]\nlabel = \"lat(min, max):\"\nitems = [\"reported.ttft_ms.min\", \"reported.ttft_ms.max\"]\nunit = \"s\"\n"),
            "t.toml",
        )
        .unwrap();
        assert_eq!(
            d.rows[0].items.iter().map(|t| t.path()).collect::<Vec<_>>(),
            ["reported.ttft_ms.min", "reported.ttft_ms.max"]
        );
        let e = err(&format!(
            "{HEAD}[[row]]\nlabel = \"A:\"\nfield = \"totals.duration_s\"\nitems = [\"totals.duration_s\"]\n"
        ));
        assert!(e.contains("row.items: `items` is for a [[row]] with neither `field`"), "{e}");
        let e = err(&format!("{HEAD}[[row]]\nlabel = \"A:\"\nitems = [\"reported.ttft_ms\"]\n"));
        assert!(e.contains("row.items"), "{e}");
        let e = err(&format!("{HEAD}[[row]]\nlabel = \"A:\"\nunit = \"s\"\nitems = [\"totals.output_tokens\"]\n"));
        assert!(e.contains("row.items: cannot convert s into"), "{e}");
        let e = err(&format!("{HEAD}[[context]]\nlabel = \"A:\"\nitems = [\"totals.duration_s\"]\n"));
        assert!(e.contains("context.items"), "{e}");
    }

    #[test]
    fn fixed_statistics_and_units() {
        let d = parse(
            &format!("{HEAD}[[row]]\nlabel = \"Average latency:\"\nfield = \"reported.e2e_ms.mean\"\nunit = \"s\"\n"),
            "t.toml",
        )
        .unwrap();
        let t = d.rows[0].target.as_ref().unwrap();
        assert_eq!(t.path(), "reported.e2e_ms.mean");
        for k in [
            StatKey::P(0.0),
            StatKey::P(50.0),
            StatKey::P(99.0),
            StatKey::P(99.9),
            StatKey::P(100.0),
            StatKey::P(123456.0),
            StatKey::Max,
            StatKey::Std,
            StatKey::Min,
        ] {
            let t = Target { field: t.field, stat: Some(k) };
            assert_eq!(t.path(), format!("{}.{k}", t.field.path));
        }
        assert_eq!(d.rows[0].unit, Some(Unit::S));
    }
}
