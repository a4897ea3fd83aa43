import BoardwalkModel

/// An in-memory string dictionary: interns on encode and resolves on decode.
///
/// Ids are assigned densely in first-seen order (`0, 1, 2, …`), so ``strings`` is exactly the table a batch
/// file writes and ``StringTable/init(strings:)`` rebuilds it. Lookup hashes the string's UTF-8 bytes
/// with a fast non-cryptographic hash into an open-addressing table of ids; it does not allocate once the
/// string is known.
///
/// - Note: The hash is not randomly seeded. Do not intern adversarial strings from an untrusted source into
///   a table whose latency matters (a collision attack degrades lookups to linear scans, never to a crash).
public struct StringTable: StringInterner, StringResolver, Sendable {
    /// The strings, indexed by id.
    public private(set) var strings: [String]
    /// Open-addressing slots, each the high 32 bits of its string's hash above `id + 1` (0 = empty); the
    /// count is a power of two. A probe compares the hash bits held in the slot before it reads a string, so
    /// a lookup touches one slot and the one string it matches, not a second array of hashes.
    @usableFromInline var slots: [UInt64]
    /// The hash of each string, indexed by id, so that growing the table does not rehash bytes.
    @usableFromInline var hashes: [UInt64]
    /// A direct-mapped cache from a `String`'s 16-byte representation to its id (see ``intern(_:)``): the
    /// representations and ids are plain integers, so a lookup retains nothing.
    @usableFromInline var cacheKeys: [CacheKey]
    /// The cached strings themselves, kept (retained) so that the storage a key points to stays alive and
    /// shared, hence immutable, for as long as the key is in the cache.
    @usableFromInline var cacheStrings: [String]

    @usableFromInline
    struct CacheKey: Sendable {
        @usableFromInline var a: UInt64
        @usableFromInline var b: UInt64
        @usableFromInline var id: UInt32

        @inlinable
        init(a: UInt64, b: UInt64, id: UInt32) {
            self.a = a
            self.b = b
            self.id = id
        }
    }

    /// 16 384 slots (640 KiB with the strings): with a thousand sessions in flight (two UUID strings each)
    /// 4 096 slots missed on about a fifth of the store's intern calls, each miss hashing and comparing
    /// the bytes. Allocated on the first intern, so an empty table (the store's placeholder) costs nothing.
    @inlinable static var cacheBits: Int { 14 }

    /// An empty table.
    public init() {
        strings = []
        slots = Array(repeating: 0, count: 64)
        hashes = []
        cacheKeys = []
        cacheStrings = []
    }

    /// A table holding `strings` with ids `0..<strings.count`, in order.
    ///
    /// Duplicates keep their position (so a decoded file's ids stay valid) and the first one wins on intern.
    /// - Complexity: O(total bytes).
    public init(strings: [String]) {
        self.init()
        reserveCapacity(strings.count)
        for s in strings { _ = append(s, hash: StringTable.hash(s), unique: false) }
    }

    /// The number of strings.
    @inlinable
    public var count: Int { strings.count }

    /// Makes room for `n` strings without rehashing.
    public mutating func reserveCapacity(_ n: Int) {
        strings.reserveCapacity(n)
        hashes.reserveCapacity(n)
        var size = slots.count
        while size < n * 2 { size *= 2 }
        if size != slots.count { rehash(size) }
    }

    /// The string with id `id`, or `nil` when there is none.
    @inlinable
    public func string(for id: StringID) -> String? {
        let i = Int(id)
        return i < strings.count ? strings[i] : nil
    }

    /// The id of `string`, or `nil` if it was never interned.
    /// - Complexity: O(length of `string`) expected.
    public func id(of string: String) -> StringID? {
        let h = StringTable.hash(string)
        let (id, _) = find(string, hash: h)
        return id < 0 ? nil : StringID(id)
    }

    /// The id of `string` (whose hash is `h`), or -1 when it has none, and the slot where the probe stopped
    /// (the string's slot, or the empty one where it would go).
    @inline(__always)
    private func find(_ string: String, hash h: UInt64) -> (id: Int, slot: Int) {
        withUnsafePointer(to: string) { find(at: $0, hash: h) }
    }

    /// ``find(_:hash:)`` for the string stored at `string`, read in place (no retain).
    @inline(__always)
    private func find(at string: UnsafePointer<String>, hash h: UInt64) -> (id: Int, slot: Int) {
        let tag = StringTable.slotTag(h)
        return slots.withUnsafeBufferPointer { slots in
            strings.withUnsafeBufferPointer { strings in
                let mask = slots.count - 1
                var i = Int(truncatingIfNeeded: h) & mask
                while true {
                    let slot = slots[i]
                    if slot == 0 { return (-1, i) }
                    if slot & 0xFFFF_FFFF_0000_0000 == tag {
                        let id = Int(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1
                        if strings[id] == string.pointee { return (id, i) }
                    }
                    i = (i + 1) & mask
                }
            }
        }
    }

    /// The high 32 bits of a hash, in place for a slot (`| (id + 1)`).
    @inline(__always)
    private static func slotTag(_ h: UInt64) -> UInt64 { h & 0xFFFF_FFFF_0000_0000 }

    /// Returns the id of `string`, assigning the next id if it is new.
    ///
    /// A small cache in front of the hash table answers without reading the string's bytes when the same
    /// `String` value was interned recently: a string of up to 15 UTF-8 bytes is stored inline in its
    /// 16-byte representation, so equal representations mean equal text; a longer one points to its storage
    /// object, which the cache keeps alive (so it cannot be freed and reused, nor mutated in place).
    /// - Complexity: O(1) for a recently seen `String` value, otherwise O(length of `string`) expected;
    ///   amortised O(1) growth.
    @inlinable
    public mutating func intern(_ string: String) -> StringID {
        // A String is 16 bytes on 64-bit platforms (unsafeBitCast checks the sizes match).
        let (a, b) = unsafeBitCast(string, to: (UInt64, UInt64).self)
        let slot = StringTable.cacheSlot(a, b)
        // The slot is in bounds once the cache exists; an empty cache (a new table) is a miss.
        guard slot < cacheKeys.count else { return internSlow(string) }
        let key = cacheKeys[slot]
        if key.a == a && key.b == b && key.id != RecordFormat.absent { return key.id }
        return internSlow(string)
    }

    /// ``intern(_:)`` for the string stored at `string`: a hit in the cache reads only the string's 16-byte
    /// representation in place, with no retain or release; a miss loads the string and takes the slow path.
    /// - Complexity: as ``intern(_:)``.
    @inlinable @inline(__always)
    public mutating func intern(at string: UnsafePointer<String>) -> StringID {
        if let id = cachedID(at: string) { return id }
        return internSlow(at: string)
    }

    /// The id of the string stored at `string` if the identity cache of ``intern(_:)`` holds it, else `nil`;
    /// reads only the string's 16-byte representation, and never changes the table.
    ///
    /// A wrapper that persists new strings (the store's interner) answers its hits through this, and sends
    /// only misses through ``insert(_:)``.
    @inlinable @inline(__always)
    package func cachedID(at string: UnsafePointer<String>) -> StringID? {
        // The same 16 bytes unsafeBitCast reads in intern(_:), read where the String lives.
        let a = UnsafeRawPointer(string).load(as: UInt64.self)
        let b = UnsafeRawPointer(string).load(fromByteOffset: 8, as: UInt64.self)
        let slot = StringTable.cacheSlot(a, b)
        // The slot is in bounds once the cache exists; an empty cache (a new table) is a miss.
        guard slot < cacheKeys.count else { return nil }
        let key = cacheKeys[slot]
        if key.a == a && key.b == b && key.id != RecordFormat.absent { return key.id }
        return nil
    }

    @inlinable @inline(__always)
    static func cacheSlot(_ a: UInt64, _ b: UInt64) -> Int {
        Int(
            truncatingIfNeeded: ((a &* 0x9E37_79B9_7F4A_7C15) ^ (b &* 0xC2B2_AE3D_27D4_EB4F))
                >> (64 - UInt64(StringTable.cacheBits)))
    }

    // MARK: What a lookup will read
    //
    // A string the identity cache does not answer (with 100 000 sessions in flight, most session and profile ids:
    // far more distinct strings than the cache holds) costs ``intern(at:)`` up to four dependent cache misses: the
    // string's bytes, to hash them; the hash table's slot; the table's `String`; the table string's bytes, to
    // compare them (unless both are the same storage object). The store's append loop encodes a whole record between
    // two lookups, so out-of-order execution cannot overlap them; it prefetches these addresses, one stage per event
    // ahead (BoardwalkStore's `IDPrefetcher`). Nothing here changes the table, and only
    // ``storedBytesAddress(hash:)`` reads more than the string handed in and the slot array. Public for the store
    // alone: `package` access would fit better, but the fuzz targets compile the codec in a package of tools
    // version 5.3 (Fuzz/Package.swift), which has no package name to give it.

    /// The address of the UTF-8 bytes of the string stored at `string`, computed from its 16-byte representation
    /// without loading anything from its storage (the standard library's `withContiguousStorageIfAvailable` retains
    /// the storage object, which waits for the very cache line a prefetch is meant to fetch); `nil` for a small
    /// string, whose bytes are inline in the representation.
    ///
    /// The layout is the standard library's on 64-bit platforms: bit 61 of the second word marks a small string;
    /// otherwise its low 56 bits are the storage address less 32, the bytes' offset in a native storage object
    /// (a literal's address is stored with the same bias). The result is for prefetching only: on another layout it
    /// is a useless address, which a prefetch ignores, so it must never be dereferenced.
    /// - Parameter string: a valid, initialized `String`.
    @inlinable @inline(__always)
    package static func utf8Address(at string: UnsafePointer<String>) -> UnsafeRawPointer? {
        let object = UnsafeRawPointer(string).load(fromByteOffset: 8, as: UInt64.self)
        guard object & (1 << 61) == 0 else { return nil }
        return UnsafeRawPointer(bitPattern: UInt(truncatingIfNeeded: object & 0x00FF_FFFF_FFFF_FFFF) &+ 32)
    }

    /// The hash (``hashBytes(_:)``) of the string with id `id`, kept since it was interned; `nil` for an id the
    /// table does not hold.
    /// - Complexity: O(1): no byte of the string is read.
    package func storedHash(of id: StringID) -> UInt64? {
        Int(id) < hashes.count ? hashes[Int(id)] : nil
    }

    /// ``hashBytes(_:)`` of `string`'s UTF-8 bytes.
    package static func hashOfBytes(_ string: String) -> UInt64 {
        hash(string)
    }

    /// `nil` when the identity cache answers for the string stored at `string` (then ``intern(at:)`` reads nothing
    /// else); otherwise the string's hash, the key to the next stages. Reads the string's bytes.
    /// - Parameter string: a valid, initialized `String`.
    @inlinable
    package func uncachedHash(at string: UnsafePointer<String>) -> UInt64? {
        if cachedID(at: string) != nil { return nil }
        return StringTable.hash(at: string)
    }

    /// The address of the hash table's slot where a lookup of hash `h` starts. Reads nothing.
    @inlinable @inline(__always)
    package func slotAddress(hash h: UInt64) -> UnsafeRawPointer {
        slots.withUnsafeBufferPointer {
            UnsafeRawPointer($0.baseAddress! + (Int(truncatingIfNeeded: h) & ($0.count - 1)))
        }
    }

    /// The address of the table's `String` named by the slot of hash `h`, when the slot's hash bits match `h`
    /// (else `nil`: a new string, or a collision the lookup will probe past). Reads the slot.
    @inlinable @inline(__always)
    package func entryAddress(hash h: UInt64) -> UnsafeRawPointer? {
        guard let id = slotID(hash: h) else { return nil }
        return strings.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress! + id) }
    }

    /// The address of the UTF-8 bytes of the table's string named by the slot of hash `h` (see
    /// ``utf8Address(at:)``), or `nil`. Reads the slot and the table's `String`.
    @inlinable @inline(__always)
    package func storedBytesAddress(hash h: UInt64) -> UnsafeRawPointer? {
        guard let id = slotID(hash: h) else { return nil }
        return strings.withUnsafeBufferPointer { StringTable.utf8Address(at: $0.baseAddress! + id) }
    }

    /// The id in the first slot probed for hash `h`, when that slot's hash bits match.
    @inlinable @inline(__always)
    func slotID(hash h: UInt64) -> Int? {
        let slot = slots.withUnsafeBufferPointer { $0[Int(truncatingIfNeeded: h) & ($0.count - 1)] }
        guard slot != 0, slot & 0xFFFF_FFFF_0000_0000 == h & 0xFFFF_FFFF_0000_0000 else { return nil }
        let id = Int(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1
        // Always in bounds (every slot names a stored string); checked anyway, since the caller reads `strings[id]`.
        return id < strings.count ? id : nil
    }

    /// Inserts `string` if it is new, like `Set.insert`: the store uses `inserted` to know when to persist it.
    /// - Returns: whether the string was new, and its id.
    @inlinable
    package mutating func insert(_ string: String) -> (inserted: Bool, id: StringID) {
        let before = strings.count
        let id = intern(string)
        return (strings.count != before, id)
    }

    @usableFromInline
    mutating func internSlow(_ string: String) -> StringID {
        withUnsafePointer(to: string) { internSlow(at: $0) }
    }

    /// The table lookup behind the identity cache, reading the string in place: only a new string is loaded
    /// (retained, to be kept), so looking up a known one costs no retain and release.
    @usableFromInline
    mutating func internSlow(at string: UnsafePointer<String>) -> StringID {
        let h = StringTable.hash(at: string)
        var (id, i) = find(at: string, hash: h)
        if id < 0 {
            id = strings.count
            strings.append(string.pointee)
            hashes.append(h)
            place(id, hash: h, probeStop: i)
        }
        let a = UnsafeRawPointer(string).load(as: UInt64.self)
        let b = UnsafeRawPointer(string).load(fromByteOffset: 8, as: UInt64.self)
        let slot = StringTable.cacheSlot(a, b)
        if cacheKeys.isEmpty {
            cacheKeys = Array(
                repeating: CacheKey(a: 0, b: 0, id: RecordFormat.absent), count: 1 << StringTable.cacheBits)
            cacheStrings = Array(repeating: "", count: 1 << StringTable.cacheBits)
        }
        // The cache must keep alive the storage its key points to. When `string` is the very value the table
        // holds (a new string, or the same instance interned again), the table keeps it alive: no retain here.
        let (ta, tb) = strings.withUnsafeBufferPointer { unsafeBitCast($0[id], to: (UInt64, UInt64).self) }
        if ta != a || tb != b { cacheStrings[slot] = string.pointee }
        cacheKeys[slot] = CacheKey(a: a, b: b, id: StringID(id))
        return StringID(id)
    }

    /// The empty slot where a string of hash `h` goes (the table has one: it is at most half full).
    @inline(__always)
    private func emptySlot(for h: UInt64) -> Int {
        slots.withUnsafeBufferPointer { slots in
            let mask = slots.count - 1
            var i = Int(truncatingIfNeeded: h) & mask
            while slots[i] != 0 { i = (i + 1) & mask }
            return i
        }
    }

    /// Appends `string` (a decoded table's: a duplicate keeps its position, and the first id wins on lookup).
    private mutating func append(_ string: String, hash h: UInt64, unique: Bool) -> StringID {
        let (found, i) = find(string, hash: h)
        if unique && found >= 0 { return StringID(found) }
        let id = strings.count
        strings.append(string)
        hashes.append(h)
        // A duplicate in a decoded table keeps its id but no slot.
        if found < 0 { place(id, hash: h, probeStop: i) }
        return StringID(id)
    }

    /// Gives `id`, just appended with hash `h`, its slot: `i`, where the probe for it stopped, unless the table
    /// must grow first (it is kept at most half full).
    @inline(__always)
    private mutating func place(_ id: Int, hash h: UInt64, probeStop i: Int) {
        var i = i
        if (id + 1) * 2 > slots.count {
            rehash(slots.count * 2)
            i = emptySlot(for: h)
        }
        slots[i] = StringTable.slotTag(h) | UInt64(id + 1)
    }

    private mutating func rehash(_ size: Int) {
        var newSlots = [UInt64](repeating: 0, count: size)
        let mask = size - 1
        newSlots.withUnsafeMutableBufferPointer { newSlots in
            hashes.withUnsafeBufferPointer { hashes in
                for slot in slots where slot != 0 {
                    var i = Int(truncatingIfNeeded: hashes[Int(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1]) & mask
                    while newSlots[i] != 0 { i = (i + 1) & mask }
                    newSlots[i] = slot
                }
            }
        }
        slots = newSlots
    }

    /// A fast 64-bit hash of the string's UTF-8 bytes (multiply–xorshift, two lanes of 8 bytes).
    @usableFromInline
    static func hash(_ string: String) -> UInt64 {
        withUnsafePointer(to: string) { hash(at: $0) }
    }

    /// ``hash(_:)`` of the string stored at `string`, read in place.
    @usableFromInline @inline(__always)
    static func hash(at string: UnsafePointer<String>) -> UInt64 {
        if let h = string.pointee.utf8.withContiguousStorageIfAvailable({ hashBytes(UnsafeRawBufferPointer($0)) }) {
            return h
        }
        var copy = string.pointee
        return copy.withUTF8 { hashBytes(UnsafeRawBufferPointer($0)) }
    }

    /// Two independent lanes take 16 bytes per step (a 36-byte UUID is two steps and a tail), then mix. The store
    /// keys its `session_names` entries by it (docs/storage.md, "Name entries"), so it is part of the store's
    /// format: a change to it changes the format version. Inlined into the lookups (a call cost ~15 of its
    /// ~80 instructions on a 36-byte id, twice per event with 100 000 sessions in flight).
    @usableFromInline @inline(__always)
    static func hashBytes(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let n = bytes.count
        var h0: UInt64 = 0x9E37_79B9_7F4A_7C15 &* UInt64(truncatingIfNeeded: n &+ 1)
        var h1: UInt64 = 0x2545_F491_4F6C_DD1D ^ UInt64(truncatingIfNeeded: n)
        guard let base = bytes.baseAddress, n > 0 else { return mix(h0) }
        var i = 0
        while i &+ 16 <= n {
            h0 = (h0 ^ base.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            h1 = (h1 ^ base.loadUnaligned(fromByteOffset: i &+ 8, as: UInt64.self)) &* 0xC4CE_B9FE_1A85_EC53
            h0 ^= h0 &>> 32
            h1 ^= h1 &>> 29
            i &+= 16
        }
        if i &+ 8 <= n {
            h0 = (h0 ^ base.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            h0 ^= h0 &>> 32
            i &+= 8
        }
        if i < n {
            var tail: UInt64
            if n >= 8 {
                // Overlap the last full word rather than assembling the tail byte by byte.
                tail = base.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
            } else {
                tail = 0
                var k = 0
                if n >= 4 {
                    tail = UInt64(base.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
                    k = 4
                }
                while k < n {
                    tail |= UInt64(base.load(fromByteOffset: k, as: UInt8.self)) &<< UInt64(truncatingIfNeeded: 8 &* k)
                    k &+= 1
                }
            }
            h1 = (h1 ^ tail) &* 0xC4CE_B9FE_1A85_EC53
        }
        return mix(h0 ^ (h1 &<< 23 | h1 &>> 41))
    }

    @inline(__always) @usableFromInline
    static func mix(_ x: UInt64) -> UInt64 {
        var z = x &* 0xBF58_476D_1CE4_E5B9
        z ^= z &>> 31
        z &*= 0x94D0_49BB_1331_11EB
        return z ^ (z &>> 29)
    }
}
