import BoardwalkModel

extension RecordFormat {
    /// The code a store's block summary counts a record under, and the name's reference for code 15: `kind << 4 |
    /// name` for an analytics event (`name` is the name code, 15 for a name outside ``AnalyticsName``, whose
    /// reference is `name`), `kind << 4` for any other kind, and ``unclassifiedKindCode`` for bytes that are not a
    /// record body of this version. `name` is ``absent`` but for code 15.
    ///
    /// Reads the tag, the flags, skips the fields before the payload and reads an analytics event's name byte (and
    /// reference); checks only what it needs to find them. It never traps, whatever the bytes.
    /// - Complexity: O(the fields before the payload), a few dozen instructions.
    @inlinable
    package static func kindCode(body bytes: UnsafeRawBufferPointer) -> (code: UInt8, name: StringID) {
        let unclassified = (unclassifiedKindCode, absent)
        guard let base = bytes.baseAddress, bytes.count > 0 else { return unclassified }
        var r = ByteReader(base: base, position: 0, end: bytes.count)
        do throws(CodecError) {
            let tag = try r.byte()
            let kind = tag & kindMask
            guard Int(tag >> versionShift) == version, kind <= kindError else { return unclassified }
            guard kind == kindAnalytics else { return (kind << 4, absent) }
            let flags = try r.varint()
            guard flags & ~flagsDefined == 0 else { return unclassified }
            if flags & flagMeta != 0 {
                _ = try r.varint()  // the screen's client id
                _ = try r.varint()  // total screens
            }
            if flags & flagSession != 0 { _ = try r.varint() }
            if flags & flagProfile != 0 { _ = try r.varint() }
            switch (flags >> eventIDShift) & 3 {
            case 0: break
            case 1: _ = try r.varint()
            default: try r.skip(16)
            }
            if flags & flagPlacement != 0 { _ = try r.varint() }
            if flags & flagVariation != 0 { _ = try r.varint() }
            let name = try r.byte() & 0x0F
            guard name != analyticsUnknown else {
                let ref = try r.varint()
                return ref < UInt64(absent) ? (name, StringID(ref)) : unclassified
            }
            return name <= 7 ? (name, absent) : unclassified
        } catch {
            return unclassified
        }
    }

    /// The code ``kindCode(body:)`` gives bytes it cannot classify.
    @inlinable package static var unclassifiedKindCode: UInt8 { 0xFF }
}
