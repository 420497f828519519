//! The pool snapshot's SVG picture, parsed as XML: a background over the
//! whole image, a title with the totals, a legend, sizes in binary units,
//! one block rectangle per block at its offset in a bar scaled to the
//! segment's reserved addresses, asleep segments marked, no blank rows.
//! One test at a time (live lists are process-wide).

mod common;

use ascend::pool::{DevicePool, PoolBlock, PoolSnapshot, SegmentSnapshot};
use ascend::stream::{Ordered, Stream};
use roxmltree::{Document, Node};
use std::sync::{Arc, MutexGuard};

/// Tolerance of a coordinate, written with two decimals.
const EPSILON: f64 = 0.011;

fn attribute(node: Node, name: &str) -> f64 {
    let value = node.attribute(name).unwrap_or_else(|| panic!("no {name} on {node:?}"));
    value
        .parse()
        .unwrap_or_else(|_| panic!("{name}={value:?} is not a number"))
}

fn class_is(node: Node, class: &str) -> bool {
    node.attribute("class") == Some(class)
}

/// The text a `<text>` element shows (its tspans too).
fn shown(node: Node) -> String {
    node.descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect()
}

/// Every `<text>` the picture shows, in document order.
fn texts(document: &Document) -> Vec<String> {
    let elements = document.descendants().filter(|n| n.has_tag_name("text"));
    elements.map(shown).collect()
}

/// Bytes in a size like `1.50 KiB` at the start of `text`, and the rest.
fn parse_size(text: &str) -> (f64, &str) {
    let mut words = text.splitn(3, ' ');
    let number: f64 = words
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text:?}"));
    let unit = words.next().unwrap_or_default();
    let power = ["B", "KiB", "MiB", "GiB", "TiB"]
        .iter()
        .position(|u| unit.trim_end_matches([',', ')']) == *u)
        .unwrap_or_else(|| panic!("no unit in {text:?}"));
    (number * 1024f64.powi(power as i32), words.next().unwrap_or_default())
}

/// Whether `shown` is `bytes` to the three digits the picture writes.
fn close(shown: f64, bytes: usize) -> bool {
    (shown - bytes as f64).abs() <= bytes as f64 * 0.005 + 0.5
}

/// The length of the longest run of digits in `text`.
fn longest_digit_run(text: &str) -> usize {
    text.split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0)
}

/// The test's turn, a pool with blocks of every state in two tags, the
/// live blocks, and a snapshot.
fn busy_pool() -> (
    MutexGuard<'static, ()>,
    DevicePool,
    Vec<Ordered<PoolBlock>>,
    PoolSnapshot,
) {
    let (serial, device, granule) = common::pool::start();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 64, 4 * granule, 256)).unwrap();
    let stream = Arc::new(Stream::new(&device).unwrap());
    let a = pool.alloc(4096).unwrap();
    let b = pool.alloc(8192).unwrap();
    let c = pool.alloc(1536).unwrap();
    let big = pool.alloc(3 * granule).unwrap();
    let tagged = pool.alloc_tagged(5 * granule, "kv<&>\"").unwrap();
    b.fill_bytes(0, &stream).unwrap();
    drop(b); // cached with its memset: free with pending work
    let snapshot = pool.snapshot();
    (serial, pool, vec![a, c, big, tagged], snapshot)
}

/// Checks the bars of `segment` in its `<g class="segment">`.
fn check_segment(group: Node, segment: &SegmentSnapshot) {
    let rects: Vec<Node> = group.children().filter(|n| n.has_tag_name("rect")).collect();
    let frame = rects.iter().find(|r| class_is(**r, "frame")).expect("a frame");
    let (left, width) = (attribute(*frame, "x"), attribute(*frame, "width"));
    let scale = width / segment.capacity as f64;
    // The mapped part is mapped/capacity of the bar; the unmapped rest
    // starts at its end and runs to the bar's.
    let mapped = rects.iter().find(|r| class_is(**r, "mapped")).expect("the mapped part");
    let mapped_width = attribute(*mapped, "width");
    assert!(
        (mapped_width - segment.mapped as f64 * scale).abs() < EPSILON,
        "{segment:?}"
    );
    let unmapped = rects
        .iter()
        .find(|r| class_is(**r, "unmapped"))
        .expect("the unmapped part");
    assert!((attribute(*unmapped, "x") - (left + mapped_width)).abs() < 2.0 * EPSILON);
    assert!((attribute(*unmapped, "x") + attribute(*unmapped, "width") - (left + width)).abs() < 2.0 * EPSILON);
    // A block rectangle per block, at its offset, of its size.
    let blocks: Vec<&Node> = rects.iter().filter(|r| class_is(**r, "block")).collect();
    assert_eq!(blocks.len(), segment.blocks.len(), "{segment:?}");
    for (rect, block) in blocks.iter().zip(&segment.blocks) {
        assert!((attribute(**rect, "x") - (left + block.offset as f64 * scale)).abs() < EPSILON);
        let expected = (block.size as f64 * scale).max(1.0);
        assert!((attribute(**rect, "width") - expected).abs() < EPSILON, "{block:?}");
    }
    // A part of a few MiB of a larger bar is also drawn enlarged: its
    // blocks tile the full width.
    let enlarged: Vec<&Node> = rects.iter().filter(|r| class_is(**r, "enlarged")).collect();
    if segment.mapped > 0 && segment.mapped < segment.capacity {
        assert_eq!(enlarged.len(), segment.blocks.len());
        let total: f64 = enlarged.iter().map(|r| attribute(**r, "width")).sum();
        let thin = enlarged.iter().filter(|r| attribute(***r, "width") <= 1.0).count() as f64;
        assert!(
            (total - width).abs() < EPSILON * segment.blocks.len() as f64 + thin,
            "{total} of {width}"
        );
    }
    // The label: tag, pool, mapped X of Y.
    let label = shown(
        group
            .prev_sibling_element()
            .and_then(|n| n.prev_sibling_element())
            .expect("label"),
    );
    assert!(
        label.starts_with(&format!("{}, {} pool: mapped ", segment.tag, segment.pool)),
        "{label}"
    );
    let (mapped_shown, rest) = parse_size(label.split("mapped ").nth(1).unwrap_or_default());
    assert!(close(mapped_shown, segment.mapped), "{label}");
    let (capacity_shown, _) = parse_size(rest.trim_start_matches("of "));
    assert!(close(capacity_shown, segment.capacity), "{label}");
    assert_eq!(label.contains("ASLEEP"), segment.asleep, "{label}");
}

/// Every element drawn is within `gap` pixels of the one above (no blank
/// rows), down to the bottom of the image.
fn check_no_blank_rows(document: &Document, height: f64, gap: f64) {
    let mut spans: Vec<(f64, f64)> = Vec::new();
    for node in document.descendants().filter(|n| n.is_element()) {
        if node.has_tag_name("text") {
            let y = attribute(node, "y");
            spans.push((y - 14.0, y));
        } else if node.has_tag_name("rect") && !class_is(node, "background") && node.has_attribute("y") {
            let y = attribute(node, "y");
            spans.push((y, y + attribute(node, "height")));
        }
    }
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut covered = 0.0f64;
    for (top, bottom) in spans {
        assert!(top - covered <= gap, "nothing drawn from y={covered} to y={top}");
        covered = covered.max(bottom);
    }
    assert!(
        height - covered <= gap,
        "nothing drawn from y={covered} to the bottom ({height})"
    );
}

#[test]
fn the_picture_reads_on_its_own() {
    let (_serial, pool, blocks, snapshot) = busy_pool();
    let svg = snapshot.to_svg();
    let document = Document::parse(&svg).expect("the SVG is XML");
    let root = document.root_element();
    assert!(root.has_tag_name("svg"));
    let (width, height) = (attribute(root, "width"), attribute(root, "height"));

    // A light background over the whole image, before anything else.
    let background = root.first_element_child().expect("a first element");
    assert!(background.has_tag_name("rect") && class_is(background, "background"));
    assert_eq!((attribute(background, "x"), attribute(background, "y")), (0.0, 0.0));
    assert_eq!(
        (attribute(background, "width"), attribute(background, "height")),
        (width, height)
    );
    assert_eq!(background.attribute("fill"), Some("#ffffff"));

    // The title: the device and totals, in binary units.
    let texts = texts(&document);
    let stats = &snapshot.stats;
    let title = texts[0]
        .strip_prefix("Device 0 pool: ")
        .unwrap_or_else(|| panic!("{}", texts[0]));
    let (allocated, rest) = parse_size(title);
    assert!(close(allocated, stats.allocated), "{title}");
    let (reserved, rest) = parse_size(rest.trim_start_matches("allocated, "));
    assert!(close(reserved, stats.reserved), "{title}");
    assert_eq!(rest, format!("reserved (mapped), {} segments", snapshot.segments.len()));

    // The legend, and sizes everywhere in units, never as long numbers.
    let legend = root.children().find(|n| class_is(*n, "legend")).expect("a legend");
    let labels: Vec<String> = legend
        .children()
        .filter(|n| n.has_tag_name("text"))
        .map(shown)
        .collect();
    for label in ["allocated", "free", "free with pending work", "unmapped addresses"] {
        assert!(labels.iter().any(|l| l == label), "{label} in {labels:?}");
    }
    assert!(texts.iter().any(|t| t.contains(" MiB")) && texts.iter().any(|t| t.contains(" KiB")));
    for text in &texts {
        assert!(longest_digit_run(text) < 7, "a raw number in {text:?}");
    }

    // One group per segment, in order, each checked; a block rectangle per
    // block in all.
    let groups: Vec<Node> = root.children().filter(|n| class_is(*n, "segment")).collect();
    assert_eq!(groups.len(), snapshot.segments.len());
    for (group, segment) in groups.iter().zip(&snapshot.segments) {
        check_segment(*group, segment);
    }
    let block_count: usize = snapshot.segments.iter().map(|s| s.blocks.len()).sum();
    assert_eq!(svg.matches("class=\"block\"").count(), block_count);
    assert!(
        texts.iter().any(|t| t.starts_with("kv<&>\", small pool")),
        "the tag, unescaped by the parser"
    );
    check_no_blank_rows(&document, height, 30.0);
    drop(blocks);
    drop(pool);
}

#[test]
fn asleep_segments_say_so() {
    let (_serial, pool, blocks, _) = busy_pool();
    pool.sleep(&[]).unwrap();
    let snapshot = pool.snapshot();
    assert!(snapshot.segments.iter().all(|segment| segment.asleep));
    let svg = snapshot.to_svg();
    let document = Document::parse(&svg).expect("the SVG is XML");
    let groups: Vec<Node> = document
        .root_element()
        .children()
        .filter(|n| class_is(*n, "segment"))
        .collect();
    for (group, segment) in groups.iter().zip(&snapshot.segments) {
        check_segment(*group, segment);
    }
    check_no_blank_rows(&document, attribute(document.root_element(), "height"), 30.0);
    drop(blocks);
    pool.wake().unwrap();
}
