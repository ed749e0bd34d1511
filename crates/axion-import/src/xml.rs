//! Reading XML robot descriptions: the line of any element in O(log n), and attribute
//! values checked as a person would write them (numbers, vectors of a fixed length).

use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use roxmltree::{Document, Node, ParsingOptions};

use crate::LineIndex;

/// Most elements and attributes a robot file may hold; beyond it the file is refused
/// before it is built in memory.
pub(crate) const MAX_NODES: u32 = 2_000_000;

/// Deepest element nesting read (URDF needs 4 levels, MJCF body trees rarely 30).
pub(crate) const MAX_DEPTH: usize = 256;

/// A problem found at a line of the file.
#[derive(Debug)]
pub(crate) struct Issue {
    pub line: u32,
    pub message: String,
}

/// Mends two slips that robot tools written in C accept and XML does not, and says
/// what it did: NUL bytes after the last element (a C string's terminator written to
/// the file), and an `<?xml …?>` declaration that is not at the very start (after
/// comments or blank lines). The declaration is blanked with spaces, so every line
/// keeps its number.
pub(crate) fn tolerate(text: &str) -> (std::borrow::Cow<'_, str>, Vec<Issue>) {
    let mut notes = Vec::new();
    let mut out = std::borrow::Cow::Borrowed(text);
    let trimmed = text.trim_end_matches('\0');
    if trimmed.len() != text.len() {
        let line = trimmed.matches('\n').count() as u32 + 1;
        notes.push(Issue {
            line,
            message: format!(
                "{} NUL byte(s) after the last element ignored",
                text.len() - trimmed.len()
            ),
        });
        out = std::borrow::Cow::Owned(trimmed.to_string());
    }
    let start = out.trim_start_matches('\u{feff}');
    let lead = out.len() - start.len();
    if let Some(at) = out.find("<?xml")
        && at > lead
        && let Some(len) = out[at..].find("?>")
    {
        let line = out[..at].matches('\n').count() as u32 + 1;
        notes.push(Issue {
            line,
            message: "the <?xml …?> declaration is not at the start of the file; ignored".into(),
        });
        let mut owned = out.into_owned();
        owned.replace_range(at..at + len + 2, &" ".repeat(len + 2));
        out = std::borrow::Cow::Owned(owned);
    }
    (out, notes)
}

/// A parsed document and the byte offsets where its lines start.
pub(crate) struct Xml<'input> {
    pub doc: Document<'input>,
    lines: LineIndex,
}

impl<'input> Xml<'input> {
    /// Parses `text`, refusing DTDs, more than [`MAX_NODES`] nodes and nesting deeper
    /// than [`MAX_DEPTH`]. Use [`tolerate`] first for the slips other tools accept.
    pub fn parse(text: &'input str) -> Result<Self, Issue> {
        let lines = LineIndex::new(text);
        let options = ParsingOptions {
            nodes_limit: MAX_NODES,
            ..Default::default()
        };
        let doc = Document::parse_with_options(text, options).map_err(|e| Issue {
            line: e.pos().row,
            message: e.to_string(),
        })?;
        let xml = Self { doc, lines };
        // Nesting depth, without recursion.
        let mut stack = vec![(xml.doc.root(), 0usize)];
        while let Some((node, depth)) = stack.pop() {
            if depth > MAX_DEPTH {
                return Err(Issue {
                    line: xml.line(node),
                    message: format!("elements nested more than {MAX_DEPTH} deep"),
                });
            }
            stack.extend(node.children().map(|c| (c, depth + 1)));
        }
        Ok(xml)
    }

    /// The 1-based line where `node` starts.
    pub fn line(&self, node: Node) -> u32 {
        let offset = node.range().start;
        self.lines.line(offset) as u32
    }

    /// An issue at `node`.
    pub fn issue(&self, node: Node, message: impl Into<String>) -> Issue {
        Issue {
            line: self.line(node),
            message: message.into(),
        }
    }

    /// A required attribute.
    pub fn required<'a>(&self, node: Node<'a, 'input>, name: &str) -> Result<&'a str, Issue> {
        node.attribute(name).ok_or_else(|| {
            self.issue(
                node,
                format!("<{}> needs a `{name}` attribute", node.tag_name().name()),
            )
        })
    }

    /// An optional number attribute: finite, written as a number.
    pub fn number(&self, node: Node, name: &str) -> Result<Option<f64>, Issue> {
        let Some(text) = node.attribute(name) else {
            return Ok(None);
        };
        let [x] = self.numbers::<1>(node, name, text)?;
        Ok(Some(x))
    }

    /// A required number attribute.
    pub fn required_number(&self, node: Node, name: &str) -> Result<f64, Issue> {
        self.number(node, name)?.ok_or_else(|| {
            self.issue(
                node,
                format!("<{}> needs a `{name}` attribute", node.tag_name().name()),
            )
        })
    }

    /// An optional attribute of exactly `N` numbers separated by spaces.
    pub fn vector<const N: usize>(
        &self,
        node: Node,
        name: &str,
    ) -> Result<Option<[f64; N]>, Issue> {
        node.attribute(name)
            .map(|text| self.numbers::<N>(node, name, text))
            .transpose()
    }

    /// `text` (the value of attribute `name` of `node`, or its default) as exactly `N`
    /// numbers.
    pub fn numbers<const N: usize>(
        &self,
        node: Node,
        name: &str,
        text: &str,
    ) -> Result<[f64; N], Issue> {
        let list = self.number_list(node, name, text)?;
        <[f64; N]>::try_from(list.as_slice()).map_err(|_| {
            let expected = if N == 1 {
                "one number".to_string()
            } else {
                format!("{N} numbers")
            };
            self.issue(
                node,
                format!(
                    "<{} {name}=\"{text}\">: expected {expected}, found {}",
                    node.tag_name().name(),
                    list.len()
                ),
            )
        })
    }

    /// `text` as a list of finite numbers separated by spaces.
    pub fn number_list(&self, node: Node, name: &str, text: &str) -> Result<Vec<f64>, Issue> {
        let what = || format!("<{} {name}=\"{text}\">", node.tag_name().name());
        if text.contains("${") || text.contains("$(") {
            return Err(self.issue(
                node,
                format!(
                    "{}: an unexpanded xacro expression; run xacro on the file first",
                    what()
                ),
            ));
        }
        if text.contains(',') {
            return Err(self.issue(
                node,
                format!("{}: numbers are separated by spaces, not commas", what()),
            ));
        }
        text.split_whitespace()
            .map(|p| {
                p.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| {
                        self.issue(node, format!("{}: {p:?} is not a finite number", what()))
                    })
            })
            .collect()
    }

    /// The first child element named `name`.
    pub fn child<'a>(&self, node: Node<'a, 'input>, name: &str) -> Option<Node<'a, 'input>> {
        node.children().find(|c| c.has_tag_name(name))
    }

    /// A URDF `<origin xyz rpy>` child of `node` (identity when absent).
    pub fn origin(&self, node: Node) -> Result<Isometry3<f64>, Issue> {
        let Some(origin) = self.child(node, "origin") else {
            return Ok(Isometry3::identity());
        };
        let xyz = self.vector::<3>(origin, "xyz")?.unwrap_or([0.0; 3]);
        let rpy = self.vector::<3>(origin, "rpy")?.unwrap_or([0.0; 3]);
        Ok(Isometry3::from_parts(
            Vector3::from(xyz).into(),
            UnitQuaternion::from_euler_angles(rpy[0], rpy[1], rpy[2]),
        ))
    }
}
