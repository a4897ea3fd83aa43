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
