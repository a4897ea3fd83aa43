import BoardwalkCodec

/// Consecutive strings of a dictionary packed into one value: what the store's `strings` database holds
/// (store format 5; `docs/codec.md`, "String chunks").
///
/// A chunk is a checksum, a count, then each string in id order; its key (the store's) carries the first string's
/// id, and the checksum (CRC-32C, little-endian) covers the key and everything after it.
/// A string that is a canonical UUID (`8-4-4-4-12` hex digits, all lowercase or all uppercase letters: the
/// session and profile ids of most apps) is kept as its 16 bytes and a case flag instead of 36 characters.
///
/// ```swift
/// var builder = StringChunkBuilder()
/// for s in newStrings {
///     var s = s  // `withUTF8` makes the bytes contiguous when they are not (it never skips a string)
///     s.withUTF8 { builder.append(UnsafeRawBufferPointer($0)) }
/// }
/// builder.withValue(checksumSeed: seed) { value in store(key: firstID, value) }   // seed: CRC32C of the key
/// ```
///
/// The builder's buffer is a reference that copies share (as ``EventBlockBuilder``'s): keep one builder per
/// writer and reuse it with ``reset()``; two copies appended to would write over each other.
package struct StringChunkBuilder {
    /// Room for the checksum and the count's varint in front of the strings (a count below 2^35).
    private static let countRoom = StringChunkReader.checksumSize + 5
    private var storage: BlockStorage
    /// Where the next string goes (the strings start at ``countRoom``).
    private var end = countRoom
    /// Strings appended since the last ``reset()``.
    package private(set) var count = 0

    /// A builder with room for `capacity` bytes before it grows (it keeps what it grew to across ``reset()``).
    package init(capacity: Int = 2048) {
        storage = BlockStorage(capacity: max(capacity, 64))
    }

    /// The size of the value ``withValue(_:)`` would hand out.
    package var byteCount: Int { end - Self.countRoom + StringChunkReader.checksumSize + varintSize(UInt64(count)) }

    /// The bytes one more string of `utf8Count` bytes takes in the chunk, at most (its header and its bytes).
    ///
    /// The count in front may grow by a byte as well (at 128 strings, 16 384, …): ``byteCount(appending:)``
    /// includes that, to keep a chunk within a size.
    package static func byteCountBound(utf8Count: Int) -> Int { varintSize(UInt64(utf8Count) << 1) + utf8Count }

    /// The size of the value after appending one more string of `utf8Count` bytes, at most: ``byteCount``, the
    /// string's ``byteCountBound(utf8Count:)``, and the byte the count's varint gains when it grows.
    package func byteCount(appending utf8Count: Int) -> Int {
        end - Self.countRoom + StringChunkReader.checksumSize + varintSize(UInt64(count + 1))
            + Self.byteCountBound(utf8Count: utf8Count)
    }

    /// Starts a new chunk.
    package mutating func reset() {
        end = Self.countRoom
        count = 0
    }

    /// Appends a string given as its UTF-8 bytes (not checked: the caller's strings are Swift strings).
    /// - Complexity: O(its bytes), no allocation unless the chunk outgrows the builder's storage.
    package mutating func append(_ utf8: UnsafeRawBufferPointer) {
        let needed = end + 10 + utf8.count
        if needed > storage.capacity { storage = storage.grown(to: needed) }
        var w = ByteWriter(base: storage.pointer, position: end)
        if let (hi, lo, upper) = parseUUID(utf8) {
            w.byte(upper ? StringChunkFormat.upperUUID : StringChunkFormat.lowerUUID)
            // `fixed64` writes least significant byte first: of the swapped value, that is big-endian.
            w.fixed64(hi.byteSwapped)
            w.fixed64(lo.byteSwapped)
        } else {
            w.varint(UInt64(utf8.count) << 1)
            w.bytes(utf8)
        }
        end = w.position
        count += 1
    }

    /// Calls `body` with the chunk's bytes: the checksum, the count, then the strings.
    ///
    /// The checksum continues `checksumSeed`, the checksum of the chunk's key where it is stored, so that a chunk
    /// read under another key fails its check as a changed one does.
    /// - Complexity: O(bytes of the chunk), for the checksum.
    package func withValue<R>(checksumSeed: CRC32C, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let countStart = Self.countRoom - varintSize(UInt64(count))
        var w = ByteWriter(base: storage.pointer, position: countStart)
        w.varint(UInt64(count))
        let start = countStart - StoredChecksum.size
        let chunk = UnsafeMutableRawBufferPointer(start: storage.pointer + start, count: end - start)
        StoredChecksum.seal(chunk, seed: checksumSeed)
        return try body(UnsafeRawBufferPointer(chunk))
    }
}

/// One string of a chunk, as ``StringChunkReader`` reads it: borrowed UTF-8 bytes, or a UUID kept as 16 bytes.
package enum StringChunkEntry {
    /// The string's UTF-8 bytes, borrowed from the chunk (valid as long as the chunk's bytes are).
    case utf8(UnsafeRawBufferPointer)
    /// A canonical UUID: its 128 bits, and whether its letters are uppercase.
    case uuid(high: UInt64, low: UInt64, uppercase: Bool)

    /// The string (invalid UTF-8 bytes are replaced, as `String(decoding:as:)` does).
    /// - Complexity: O(its bytes); one allocation for 16 bytes or more.
    package var string: String {
        switch self {
        case .utf8(let bytes): String(decoding: bytes, as: UTF8.self)
        case .uuid(let hi, let lo, let upper): formatUUID(hi: hi, lo: lo, upper: upper)
        }
    }

    /// Whether the string is exactly the given UTF-8 bytes. No allocation.
    package func matches(_ utf8: UnsafeRawBufferPointer) -> Bool {
        switch self {
        case .utf8(let bytes):
            return bytes.elementsEqual(utf8)
        case .uuid(let hi, let lo, let upper):
            guard let parsed = parseUUID(utf8) else { return false }
            // A UUID without letters parses as lowercase; it is the same string either way.
            let sameCase = parsed.upper == upper || !(hasHexLetter(hi) || hasHexLetter(lo))
            return parsed.hi == hi && parsed.lo == lo && sameCase
        }
    }
}

/// Reads a chunk of strings from untrusted bytes, one string at a time, without copying.
///
/// The checksum is checked at ``init(_:checksumSeed:)``, then the count against what the bytes can hold; each
/// ``next()`` checks one string's header and length; after the last string the value must end exactly. Any violation throws a
/// ``CodecError`` whose offset is from the value's start. Nothing here traps.
package struct StringChunkReader {
    private var reader: ByteReader
    /// Strings in the chunk.
    package let count: Int
    /// Strings read so far.
    package private(set) var index = 0

    /// Bytes of the checksum in front of the count.
    package static var checksumSize: Int { StoredChecksum.size }

    /// Checks the checksum of the chunk in `bytes`, continuing `checksumSeed` (the checksum of its key), and reads
    /// its count.
    /// - Throws: ``CodecError`` with ``CodecError/Reason/checksumMismatch(stored:computed:)`` at offset 0 when the
    ///   checksum does not match; for an empty or truncated value, a count of 0, or a count the bytes cannot hold
    ///   (each string takes at least one byte).
    /// - Complexity: O(`bytes.count`) for the checksum.
    package init(_ bytes: UnsafeRawBufferPointer, checksumSeed: CRC32C) throws(CodecError) {
        let checksumSize = StoredChecksum.size
        try StoredChecksum.verify(bytes, seed: checksumSeed)
        // `verify` threw for an empty value: there is a base address.
        var r = ByteReader(base: bytes.baseAddress!, position: checksumSize, end: bytes.count)
        let count = try r.varint()
        // A count of 0 is no chunk (the writer never makes one); said as such, not as a count over a limit.
        guard count >= 1 else {
            throw CodecError(offset: checksumSize, reason: .invalidValue(field: "string chunk count", value: 0))
        }
        guard count <= UInt64(r.remaining) else {
            throw CodecError(offset: checksumSize, reason: .oversizedCount(count: count, limit: r.remaining))
        }
        reader = r
        self.count = Int(count)
    }

    /// The next string; `nil` after the last one (when the value has been checked to end there).
    package mutating func next() throws(CodecError) -> StringChunkEntry? {
        guard index < count else {
            guard reader.position == reader.end else {
                throw CodecError(offset: reader.position, reason: .trailingBytes)
            }
            return nil
        }
        let at = reader.position
        let header = try reader.varint()
        let entry: StringChunkEntry
        if header & 1 == 0 {
            let length = header >> 1
            guard length <= UInt64(reader.remaining) else {
                throw CodecError(offset: reader.position, reason: .truncated)
            }
            entry = .utf8(UnsafeRawBufferPointer(start: reader.base + reader.position, count: Int(length)))
            reader.position += Int(length)
        } else {
            guard header == UInt64(StringChunkFormat.lowerUUID) || header == UInt64(StringChunkFormat.upperUUID) else {
                throw CodecError(offset: at, reason: .reservedBits(field: "string header", value: header))
            }
            guard reader.remaining >= 16 else { throw CodecError(offset: reader.position, reason: .truncated) }
            let hi = UInt64(bigEndian: reader.base.loadUnaligned(fromByteOffset: reader.position, as: UInt64.self))
            let lo = UInt64(bigEndian: reader.base.loadUnaligned(fromByteOffset: reader.position + 8, as: UInt64.self))
            reader.position += 16
            entry = .uuid(high: hi, low: lo, uppercase: header == UInt64(StringChunkFormat.upperUUID))
        }
        index += 1
        return entry
    }
}

/// The header values of a chunk's strings besides a length (`length << 1`, even).
enum StringChunkFormat {
    static let lowerUUID: UInt8 = 1
    static let upperUUID: UInt8 = 3
}
