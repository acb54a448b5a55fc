//! The PDF/A-3b of a document: laid out as pages of text and rules, then written by krilla,
//! which checks every PDF/A-3b rule as it writes (fonts embedded, every character in them,
//! dates, the attachment's description) and refuses a file that breaks one.

use std::sync::LazyLock;

use chrono::{DateTime, Datelike, Timelike, Utc};
use krilla::configure::{Archival, ConfigurationBuilder};
use krilla::embed::{AssociationKind, EmbeddedFile, MimeType};
use krilla::geom::{PathBuilder, Point, Rect};
use krilla::metadata::{DateTime as PdfDate, Metadata};
use krilla::page::PageSettings;
use krilla::paint::{Fill, Stroke};
use krilla::text::{Font, TextDirection};
use krilla::{Document, SerializeSettings};
use skrifa::MetadataProvider;
use skrifa::instance::{LocationRef, Size};

use super::Words;
use super::sheet::{Sheet, SheetLine};
use crate::db::entities::documents;
use crate::domain::invoice::{Content, cii};

static REGULAR_BYTES: &[u8] = include_bytes!("../../../static/fonts/DejaVuSans.ttf");
static BOLD_BYTES: &[u8] = include_bytes!("../../../static/fonts/DejaVuSans-Bold.ttf");
static REGULAR: LazyLock<Option<Font>> = LazyLock::new(|| Font::new(REGULAR_BYTES.into(), 0));
static BOLD: LazyLock<Option<Font>> = LazyLock::new(|| Font::new(BOLD_BYTES.into(), 0));

/// A4, in points.
const WIDTH: f32 = 595.28;
const HEIGHT: f32 = 841.89;
const LEFT: f32 = 50.0;
const RIGHT: f32 = WIDTH - 50.0;
const TOP: f32 = 60.0;
/// Where a page's content ends; the page number goes below.
const BOTTOM: f32 = HEIGHT - 70.0;
const SMALL: f32 = 8.0;
const TEXT: f32 = 9.0;

/// What is drawn on a page, in points from its top left corner (`y` is a text's baseline).
enum Op {
    Text { x: f32, y: f32, size: f32, bold: bool, gray: bool, text: String },
    Rule { y: f32, width: f32 },
    Band { y: f32, height: f32 },
}

/// Pages laid out from the top, a line at a time.
struct Layout {
    pages: Vec<Vec<Op>>,
    y: f32,
}

impl Layout {
    fn new() -> Self {
        Layout { pages: vec![Vec::new()], y: TOP }
    }

    fn ops(&mut self) -> &mut Vec<Op> {
        self.pages.last_mut().expect("a page")
    }

    /// Moves down by `dy`, to a new page when this one is full.
    fn down(&mut self, dy: f32) {
        self.y += dy;
        if self.y > BOTTOM {
            self.pages.push(Vec::new());
            self.y = TOP;
        }
    }

    /// Keeps `height` points together: a new page if they would not fit on this one.
    fn keep(&mut self, height: f32) {
        if self.y + height > BOTTOM {
            self.pages.push(Vec::new());
            self.y = TOP;
        }
    }

    fn text(&mut self, x: f32, size: f32, bold: bool, text: &str) {
        let y = self.y;
        self.ops().push(Op::Text { x, y, size, bold, gray: false, text: drawable(text, bold) });
    }

    fn gray(&mut self, x: f32, size: f32, text: &str) {
        let y = self.y;
        self.ops().push(Op::Text { x, y, size, bold: false, gray: true, text: drawable(text, false) });
    }

    /// Text that ends at `right`.
    fn right(&mut self, right: f32, size: f32, bold: bool, text: &str) {
        let x = right - width(&drawable(text, bold), size, bold);
        self.text(x, size, bold, text);
    }

    fn rule(&mut self, width: f32) {
        let y = self.y;
        self.ops().push(Op::Rule { y, width });
    }

    fn band(&mut self, height: f32) {
        let y = self.y;
        self.ops().push(Op::Band { y, height });
    }

    /// `text` in lines no wider than `width`, each drawn at `x` a line apart.
    fn paragraph(&mut self, x: f32, width: f32, size: f32, text: &str) {
        for line in wrap(text, width, size, false) {
            self.keep(size * 1.4);
            self.text(x, size, false, &line);
            self.down(size * 1.4);
        }
    }
}

/// `text` as the font can draw it: a character it has no glyph for (a script it does not
/// cover, an emoji, a control character) is a `?`, a space it lacks a plain space. PDF/A-3b
/// allows no missing glyph, and a document's words come from whoever typed them.
fn drawable(text: &str, bold: bool) -> String {
    let bytes = if bold { BOLD_BYTES } else { REGULAR_BYTES };
    let Ok(font) = skrifa::FontRef::new(bytes) else { return text.to_owned() };
    let charmap = font.charmap();
    text.chars()
        .map(|c| match charmap.map(c).filter(|g| g.to_u32() != 0) {
            Some(_) if !c.is_control() => c,
            _ if c.is_whitespace() => ' ',
            _ => '?',
        })
        .collect()
}

/// How wide `text` is at `size`: the advances of its glyphs.
fn width(text: &str, size: f32, bold: bool) -> f32 {
    let bytes = if bold { BOLD_BYTES } else { REGULAR_BYTES };
    let Ok(font) = skrifa::FontRef::new(bytes) else { return 0.0 };
    let (charmap, metrics) = (font.charmap(), font.glyph_metrics(Size::new(size), LocationRef::default()));
    text.chars().filter_map(|c| charmap.map(c).and_then(|g| metrics.advance_width(g))).sum()
}

/// `text` broken at spaces into lines no wider than `max` (a word wider than a line is
/// broken where it must be); line breaks in it are kept.
fn wrap(text: &str, max: f32, size: f32, bold: bool) -> Vec<String> {
    let mut lines = Vec::new();
    for paragraph in text.lines() {
        let mut line = String::new();
        for word in paragraph.split(' ') {
            let candidate = if line.is_empty() { word.to_owned() } else { format!("{line} {word}") };
            if width(&candidate, size, bold) <= max {
                line = candidate;
                continue;
            }
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            for ch in word.chars() {
                if width(&format!("{line}{ch}"), size, bold) > max && !line.is_empty() {
                    lines.push(std::mem::take(&mut line));
                }
                line.push(ch);
            }
        }
        lines.push(line);
    }
    lines
}

/// The columns of the lines' table: where each ends (the description's starts at `LEFT`).
const QUANTITY: f32 = 232.0;
const UNIT_PRICE: f32 = 290.0;
const DISCOUNT: f32 = 343.0;
const RATE: f32 = 390.0;
const NET: f32 = 447.0;
const TAX: f32 = 496.0;
const GROSS: f32 = RIGHT;
const DESCRIPTION: f32 = 150.0;

/// Writes the PDF/A-3b of `d` with `xml` attached as `factur-x.xml`.
pub fn write(d: &documents::Model, c: &Content, xml: Vec<u8>) -> Result<Vec<u8>, String> {
    let w = Words::of(d.language);
    let sheet = Sheet::of(d, c);
    let mut l = Layout::new();
    l.text(LEFT, 20.0, true, sheet.title);
    if let Some(test) = sheet.test {
        l.down(16.0);
        l.text(LEFT, TEXT, true, test);
    }
    l.down(24.0);
    for (label, value) in &sheet.facts {
        l.gray(LEFT, TEXT, label);
        l.text(LEFT + 110.0, TEXT, false, value);
        l.down(13.0);
    }
    l.down(12.0);
    parties(&mut l, w, &sheet);
    l.down(10.0);
    lines(&mut l, w, &sheet.lines);
    l.down(6.0);
    totals(&mut l, w, &sheet);
    l.down(10.0);
    for note in &sheet.notes {
        l.paragraph(LEFT, RIGHT - LEFT, TEXT, note);
        l.down(4.0);
    }
    if let Some(footer) = &sheet.footer {
        l.down(6.0);
        l.paragraph(LEFT, RIGHT - LEFT, SMALL, footer);
    }
    render(d, c, w, l.pages, xml)
}

/// The seller and the buyer side by side.
fn parties(l: &mut Layout, w: &Words, sheet: &Sheet) {
    let half = (RIGHT - LEFT) / 2.0;
    let wrapped =
        |rows: &[String]| -> Vec<String> { rows.iter().flat_map(|r| wrap(r, half - 12.0, TEXT, false)).collect() };
    let (left, right) = (wrapped(&sheet.seller), wrapped(&sheet.buyer));
    l.keep(14.0 + 12.0 * left.len().max(right.len()) as f32);
    l.text(LEFT, TEXT, true, w.seller);
    l.text(LEFT + half, TEXT, true, w.buyer);
    l.down(14.0);
    for i in 0..left.len().max(right.len()) {
        if let Some(row) = left.get(i) {
            l.text(LEFT, TEXT, false, row);
        }
        if let Some(row) = right.get(i) {
            l.text(LEFT + half, TEXT, false, row);
        }
        l.down(12.0);
    }
}

fn table_header(l: &mut Layout, w: &Words) {
    l.band(16.0);
    l.down(11.0);
    l.text(LEFT + 2.0, SMALL, true, w.description);
    for (right, label) in [
        (QUANTITY, w.quantity),
        (UNIT_PRICE, w.unit_price),
        (DISCOUNT, w.discount),
        (RATE, w.rate),
        (NET, w.net),
        (TAX, w.tax),
        (GROSS - 2.0, w.gross),
    ] {
        l.right(right, SMALL, true, label);
    }
    l.down(12.0);
}

fn lines(l: &mut Layout, w: &Words, lines: &[SheetLine]) {
    l.keep(60.0);
    table_header(l, w);
    for line in lines {
        let description = wrap(&line.description, DESCRIPTION, TEXT, false);
        let height = 12.0 * (description.len() + usize::from(line.period.is_some())) as f32 + 4.0;
        if l.y + height > BOTTOM {
            l.keep(BOTTOM);
            table_header(l, w);
        }
        for (right, value) in [
            (QUANTITY, &line.quantity),
            (UNIT_PRICE, &line.unit_price),
            (DISCOUNT, &line.discount),
            (RATE, &line.rate),
            (NET, &line.net),
            (TAX, &line.tax),
            (GROSS - 2.0, &line.gross),
        ] {
            l.right(right, SMALL, false, value);
        }
        for row in &description {
            l.text(LEFT + 2.0, TEXT, false, row);
            l.down(12.0);
        }
        if let Some(period) = &line.period {
            l.gray(LEFT + 2.0, SMALL, period);
            l.down(12.0);
        }
        l.down(2.0);
        l.rule(0.3);
        l.down(10.0);
    }
}

fn totals(l: &mut Layout, w: &Words, sheet: &Sheet) {
    let label_x = RATE - 60.0;
    l.keep(16.0 * (sheet.taxes.len() + 5) as f32);
    l.text(label_x, SMALL, true, w.per_rate);
    l.down(12.0);
    for t in &sheet.taxes {
        l.text(label_x, SMALL, false, &t.rate);
        l.right(NET, SMALL, false, &t.net);
        l.right(TAX, SMALL, false, &t.tax);
        l.right(GROSS - 2.0, SMALL, false, &t.gross);
        l.down(12.0);
    }
    l.down(4.0);
    for (label, amount, bold) in &sheet.totals {
        if *bold {
            l.down(2.0);
        }
        l.text(label_x, TEXT, *bold, label);
        l.right(GROSS - 2.0, TEXT, *bold, amount);
        l.down(14.0);
    }
}

/// The PDF of laid-out pages, with its metadata and the XML attached.
fn render(d: &documents::Model, c: &Content, w: &Words, pages: Vec<Vec<Op>>, xml: Vec<u8>) -> Result<Vec<u8>, String> {
    let (Some(regular), Some(bold)) = (REGULAR.clone(), BOLD.clone()) else {
        return Err("the embedded fonts could not be read".into());
    };
    let configuration =
        ConfigurationBuilder::new().with_archival_validator(Archival::A3_B).finish().map_err(|e| format!("{e:?}"))?;
    let settings = SerializeSettings { configuration, enable_tagging: false, ..SerializeSettings::default() };
    let mut doc = Document::new_with(settings);
    let issued = pdf_date(d.issued_at);
    let title = format!("{} {}", w.title(d.kind, c.invoice_number.is_some()), d.number_text);
    doc.set_metadata(
        Metadata::new()
            .title(title)
            .language(w.language.as_str().to_owned())
            .authors(vec![c.seller.name.clone()])
            .creator("paydesk".into())
            .producer("paydesk".into())
            .creation_date(issued)
            .document_id(d.id.clone()),
    );
    doc.embed_file(EmbeddedFile {
        path: cii::FILE_NAME.to_owned(),
        mime_type: MimeType::new("text/xml"),
        description: Some(format!("Factur-X ({}) {}", cii::CONFORMANCE_LEVEL, d.number_text)),
        association_kind: AssociationKind::Data,
        data: xml.into(),
        modification_date: Some(issued),
        compress: Some(true),
        location: None,
    })
    .ok_or("the XML could not be attached")?;
    let count = pages.len();
    for (number, ops) in pages.into_iter().enumerate() {
        let size = PageSettings::from_wh(WIDTH, HEIGHT).ok_or("A4 is not a page size")?;
        let mut page = doc.start_page_with(size);
        let mut s = page.surface();
        s.set_stroke(None);
        let black = Fill::default();
        let gray = Fill { paint: krilla::color::luma::Color::new(100).into(), ..Fill::default() };
        for op in ops {
            match op {
                Op::Text { x, y, size, bold: heavy, gray: muted, text } => {
                    s.set_fill(Some(if muted { gray.clone() } else { black.clone() }));
                    let font = if heavy { bold.clone() } else { regular.clone() };
                    s.draw_text(Point::from_xy(x, y), font, size, &text, false, TextDirection::Auto);
                }
                Op::Rule { y, width } => {
                    let mut path = PathBuilder::new();
                    path.move_to(LEFT, y);
                    path.line_to(RIGHT, y);
                    s.set_fill(None);
                    s.set_stroke(Some(Stroke { width, ..Stroke::default() }));
                    if let Some(path) = path.finish() {
                        s.draw_path(&path);
                    }
                    s.set_stroke(None);
                }
                Op::Band { y, height } => {
                    let mut path = PathBuilder::new();
                    if let Some(rect) = Rect::from_xywh(LEFT, y, RIGHT - LEFT, height) {
                        path.push_rect(rect);
                    }
                    s.set_fill(Some(Fill { paint: krilla::color::luma::Color::new(232).into(), ..Fill::default() }));
                    if let Some(path) = path.finish() {
                        s.draw_path(&path);
                    }
                }
            }
        }
        if count > 1 {
            s.set_fill(Some(gray.clone()));
            let label = format!("{} {} / {count}", w.page, number + 1);
            let x = RIGHT - width(&label, SMALL, false);
            s.draw_text(Point::from_xy(x, HEIGHT - 40.0), regular.clone(), SMALL, &label, false, TextDirection::Auto);
        }
        s.finish();
        page.finish();
    }
    doc.finish().map_err(|e| e.to_string())
}

/// A time as PDF metadata writes it, in UTC.
fn pdf_date(at: DateTime<Utc>) -> PdfDate {
    let t = at.naive_utc();
    PdfDate::new(t.year() as u16)
        .month(t.month() as u8)
        .day(t.day() as u8)
        .hour(t.hour() as u8)
        .minute(t.minute() as u8)
        .second(t.second() as u8)
        .utc_offset_hour(0)
        .utc_offset_minute(0)
}
