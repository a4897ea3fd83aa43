import BoardwalkModel

extension RecordFormat {
    /// The code a store's block summary counts a record under, and the name's reference for code 15: `kind << 4 |
    /// name` for an analytics event (`name` is the name code, 15 for a name outside ``AnalyticsName``, whose
    /// reference is `name`), `kind << 4` for any other kind, and ``unclassifiedKindCode`` for bytes that are not a
    /// record body of this version. `name` is ``absent`` but for code 15.
    ///
    /// Reads the tag, the flags, skips the fields before the payload and reads an analytics event's name byte (and
    /// reference); checks only what it needs to find them. It never traps and never reads past `bytes`, whatever they
    /// hold.
    /// - Complexity: O(the fields before the payload): a few dozen instructions for an analytics event, a handful for
    ///   any other.
    @inlinable
    package static func kindCode(body bytes: UnsafeRawBufferPointer) -> (code: UInt8, name: StringID) {
        let unclassified = (unclassifiedKindCode, absent)
        guard let base = bytes.baseAddress, bytes.count > 1 else {
            return bytes.count == 1 ? kindCode(tag: bytes[0]) : unclassified
        }
        let tag = base.load(as: UInt8.self)
        guard tag & kindMask == kindAnalytics else { return kindCode(tag: tag) }
        guard Int(tag >> versionShift) == version else { return unclassified }
        let end = bytes.count
        var p = 1
        // Flags: one byte in every record this version writes (seven defined bits).
        let flags = UInt64(base.load(fromByteOffset: p, as: UInt8.self))
        guard flags & ~flagsDefined == 0 else { return unclassified }
        p &+= 1
        /// Steps over a varint; false when it runs past the end.
        @inline(__always) func skip() -> Bool {
            while p < end {
                let byte = base.load(fromByteOffset: p, as: UInt8.self)
                p &+= 1
                if byte < 0x80 { return true }
            }
            return false
        }
        if flags & flagMeta != 0 { guard skip(), skip() else { return unclassified } }  // client id, total screens
        if flags & flagSession != 0 { guard skip() else { return unclassified } }
        if flags & flagProfile != 0 { guard skip() else { return unclassified } }
        switch (flags >> eventIDShift) & 3 {
        case 0: break
        case 1: guard skip() else { return unclassified }
        default: p &+= 16
        }
        if flags & flagPlacement != 0 { guard skip() else { return unclassified } }
        if flags & flagVariation != 0 { guard skip() else { return unclassified } }
        guard p < end else { return unclassified }
        let name = base.load(fromByteOffset: p, as: UInt8.self) & 0x0F
        guard name != analyticsUnknown else {
            var r = ByteReader(base: base, position: p &+ 1, end: end)
            guard let ref = try? r.varint(), ref < UInt64(absent) else { return unclassified }
            return (name, StringID(ref))
        }
        return name <= 7 ? (name, absent) : unclassified
    }

    /// The kind code of a record that is not an analytics event, from its tag.
    @inlinable
    static func kindCode(tag: UInt8) -> (code: UInt8, name: StringID) {
        let kind = tag & kindMask
        guard Int(tag >> versionShift) == version, kind <= kindError, kind != kindAnalytics else {
            return (unclassifiedKindCode, absent)
        }
        return (kind << 4, absent)
    }

    /// The code ``kindCode(body:)`` gives bytes it cannot classify.
    @inlinable package static var unclassifiedKindCode: UInt8 { 0xFF }
}
