import BoardwalkModel

/// Why bytes could not be decoded, and where.
///
/// Every decoder in this module reports malformed input with a `CodecError` rather than trapping: the
/// ``offset`` is the byte position (from the start of the buffer handed to the decoder, or of the file for
/// ``BatchReader``) where the problem was found, and ``reason`` says what it was.
public struct CodecError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The byte offset at which the problem was detected.
    public var offset: Int
    /// What was wrong.
    public var reason: Reason

    /// An error at `offset` for `reason`.
    @inlinable
    public init(offset: Int, reason: Reason) {
        self.offset = offset
        self.reason = reason
    }

    /// The kinds of malformed input.
    public enum Reason: Hashable, Sendable {
        /// The bytes end before the structure does.
        case truncated
        /// The record or file was written by a format version this reader does not know.
        case unsupportedVersion(Int)
        /// The record's kind tag is not one this version defines (a reader may skip the record by its length).
        case unknownKind(UInt8)
        /// A varint does not fit the integer it encodes (more than 5 bytes for 32 bits, 10 for 64).
        case varintOverflow
        /// A varint is longer than necessary (a trailing zero group): the format allows one spelling only.
        case nonCanonicalVarint
        /// A string reference is not below the number of strings known.
        case stringReferenceOutOfRange(id: UInt32, count: Int)
        /// A string reference that the caller's ``StringResolver`` could not resolve.
        case unresolvedString(id: UInt32, field: String)
        /// A string in a string table is not valid UTF-8.
        case invalidUTF8
        /// A block's CRC32C does not match its bytes.
        case checksumMismatch(stored: UInt32, computed: UInt32)
        /// A count is larger than the remaining bytes could possibly hold, or than the format's limit.
        case oversizedCount(count: UInt64, limit: Int)
        /// A record's declared length disagrees with the fields it holds.
        case lengthMismatch(declared: Int, used: Int)
        /// A flags or type byte has bits set that this version does not define.
        case reservedBits(field: String, value: UInt64)
        /// A field holds a value outside its domain (a screen index above 65 534, an unknown value type, …).
        case invalidValue(field: String, value: Int64)
        /// A record body says it has (or lacks) `meta`, but the key it was decoded with says otherwise.
        case contextMismatch
        /// A batch file does not start with the magic bytes.
        case badMagic
        /// A batch-file block has a type this version does not define.
        case unknownBlockType(UInt8)
        /// A batch file ends without its end block.
        case missingEndBlock
        /// Bytes follow the end block of a batch file.
        case trailingBytes
        /// A declared count (items in a block, totals in the end block) does not match what was found.
        case countMismatch(declared: UInt64, actual: UInt64)
    }

    /// `codec error at byte 17: checksum mismatch: …`.
    public var description: String {
        "codec error at byte \(offset): \(reason)"
    }
}

extension CodecError.Reason: CustomStringConvertible {
    /// The reason in words.
    public var description: String {
        switch self {
        case .truncated: "truncated: the bytes end before the structure does"
        case .unsupportedVersion(let v):
            "unsupported format version \(v) (this reader knows version \(RecordFormat.version))"
        case .unknownKind(let k): "unknown record kind \(k)"
        case .varintOverflow: "varint overflows its integer type"
        case .nonCanonicalVarint: "varint is not in its shortest form"
        case .stringReferenceOutOfRange(let id, let count):
            "string reference \(id) out of range (\(count) strings known)"
        case .unresolvedString(let id, let field): "string reference \(id) in \(field) could not be resolved"
        case .invalidUTF8: "invalid UTF-8 in the string table"
        case .checksumMismatch(let stored, let computed):
            "checksum mismatch: stored CRC32C \(hex(stored)), computed \(hex(computed))"
        case .oversizedCount(let count, let limit):
            "count \(count) exceeds what the remaining bytes or the format allow (at most \(limit))"
        case .lengthMismatch(let declared, let used): "declared length \(declared) but the fields use \(used)"
        case .reservedBits(let field, let value): "reserved bits set in \(field) (\(hex(value)))"
        case .invalidValue(let field, let value): "invalid \(field): \(value)"
        case .contextMismatch: "record body disagrees with its key about whether the event has meta"
        case .badMagic: "not a Boardwalk batch file (bad magic)"
        case .unknownBlockType(let t): "unknown block type \(t)"
        case .missingEndBlock: "batch file ends without its end block"
        case .trailingBytes: "bytes after the end block"
        case .countMismatch(let declared, let actual): "declared count \(declared) but found \(actual)"
        }
    }
}

private func hex(_ v: some BinaryInteger) -> String { "0x" + String(v, radix: 16) }

/// Why an event could not be encoded.
///
/// Encoding fails only for events outside the model's documented domain (a screen index outside
/// `0...Meta.maxScreenIndex`) or for string ids an interner may not hand out. Errors thrown by a
/// ``StringInterner`` itself are rethrown unchanged.
public struct EncodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public var reason: Reason

    /// The kinds of unencodable event.
    public enum Reason: Hashable, Sendable {
        /// `meta.screenIndex` is outside `0...Meta.maxScreenIndex`.
        case screenIndexOutOfRange(Int)
        /// The interner returned `UInt32.max`, which the format keeps for "no string".
        case reservedStringID
        /// The record would exceed ``RecordFormat/maxRecordLength`` (a multi-select of about a million choices).
        case recordTooLong(Int)
        /// The time (microseconds since the epoch) is outside `Timestamp.range`.
        case timeOutOfRange(Int64)
        /// `meta.totalScreens` is outside `0...Meta.maxScreenIndex + 1`.
        case totalScreensOutOfRange(Int)
        /// A string longer than ``RecordFormat/maxStringBytes`` UTF-8 bytes, in the named field.
        case stringTooLong(field: String, bytes: Int)
        /// A multi-select with more than ``RecordFormat/maxChoices`` choices.
        case tooManyChoices(Int)
        /// The event's NDJSON line would be longer than the reader's limit (`atLeast`: its strings' bytes as JSON).
        case lineTooLong(atLeast: Int, limit: Int)
    }

    /// An error for `reason`.
    @inlinable
    public init(_ reason: Reason) { self.reason = reason }

    /// The reason in words.
    public var description: String {
        switch reason {
        case .screenIndexOutOfRange(let i): "cannot encode screen index \(i): outside 0...\(Meta.maxScreenIndex)"
        case .reservedStringID: "the string interner returned the reserved id 0xFFFFFFFF"
        case .recordTooLong(let n): "record of \(n) bytes exceeds the limit of \(RecordFormat.maxRecordLength)"
        case .timeOutOfRange(let t): "time \(t) µs since the epoch is outside years 1970 through 9999"
        case .totalScreensOutOfRange(let n): "total screens \(n) is outside 0...\(Meta.maxScreenIndex + 1)"
        case .stringTooLong(let field, let n): "\(field) is \(n) bytes long; the limit is \(RecordFormat.maxStringBytes)"
        case .tooManyChoices(let n): "a multi-select of \(n) choices; the limit is \(RecordFormat.maxChoices)"
        case .lineTooLong(let n, let limit): "its strings take \(n) bytes as JSON, too long for an NDJSON line of at most \(limit)"
        }
    }
}
