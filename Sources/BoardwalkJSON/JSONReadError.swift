import BoardwalkModel

/// Why a JSON line was rejected, and where: the line, the byte column when known, the field path, a reason.
///
/// Renders as `line 12, column 40, meta.screen_index: expected an integer, found the string "2"`; the column
/// and the path are left out when they are not known or do not apply.
public struct JSONReadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The broad class of a rejection, for callers that count or filter errors.
    public enum Code: String, Hashable, Sendable {
        /// Not JSON: broken syntax, truncation, invalid UTF-8, a lone surrogate, a number out of range.
        case syntax
        /// A line with nothing on it (or only spaces).
        case emptyLine
        /// A field has the wrong JSON type.
        case type
        /// A required field is absent.
        case missing
        /// A number or timestamp is outside what Boardwalk accepts.
        case range
        /// A string that must be one of a fixed set is not (`type`, `element_type`, `kind`, …).
        case unknownValue
        /// A key appears twice in one object (two spellings of one field count as the same key).
        case duplicate
        /// A documented limit was exceeded (line length, string length, nesting, multi-select size).
        case limit
        /// The fields do not make an event: no kind can be told, or the shapes conflict.
        case shape
    }

    /// The broad class of the rejection.
    public var code: Code
    /// The 1-based line number.
    public var line: Int
    /// The 1-based byte column in the line where the offending value (or key) starts, when known.
    public var column: Int?
    /// The field path as written in the line, e.g. `meta.screen_index` or `params.value[2].label`.
    public var path: String?
    /// What is wrong, in English.
    public var reason: String

    /// An error of `code` at `line` (and `column` and `path`, when known), saying `reason`.
    public init(code: Code, line: Int, column: Int? = nil, path: String? = nil, reason: String) {
        self.code = code
        self.line = line
        self.column = column
        self.path = path
        self.reason = reason
    }

    /// `line 3, column 7, meta.screen_index: reason`.
    public var description: String {
        var out = "line \(line)"
        if let column { out += ", column \(column)" }
        if let path { out += ", \(path)" }
        out += ": " + reason
        return out
    }
}

/// Limits the reader enforces on every line. Exceeding one rejects the line with ``JSONReadError/Code/limit``.
///
/// A reader allocates its parser's buffers for the longest line up front, about 6 bytes per byte of
/// ``maxLineBytes`` (some 6 MB with the defaults), so that parsing never allocates.
public struct JSONReaderLimits: Hashable, Sendable {
    /// The longest line, in bytes, not counting the newline. Default 1 MiB.
    public var maxLineBytes: Int
    /// The longest string value or key, in bytes after unescaping. Default 64 KiB.
    public var maxStringBytes: Int
    /// The deepest nesting of objects and arrays (the top-level object is depth 1). Default 32.
    public var maxDepth: Int
    /// The most elements of one line's multi-select arrays. Default 1,000.
    public var maxChoices: Int

    /// Limits with the defaults, any of which can be changed.
    public init(maxLineBytes: Int = 1 << 20, maxStringBytes: Int = 64 << 10, maxDepth: Int = 32, maxChoices: Int = 1000)
    {
        self.maxLineBytes = maxLineBytes
        self.maxStringBytes = maxStringBytes
        self.maxDepth = maxDepth
        self.maxChoices = maxChoices
    }
}
