import BoardwalkCodec
import BoardwalkStoreFormat

/// The kinds of events a scan reads, by the kind codes that blocks' headers count (`RecordFormat.kindCode(body:)`:
/// kind and analytics name): a block whose header counts none of them is stepped over, its events not read and its
/// checksum not computed (its header's own checksum is).
///
/// A class, so that a scan can hold it while its callback changes the scan's own state: whether a code (or an analytics
/// name outside the known ones) is wanted is asked once and kept. One selection serves one thread.
package final class KindSelection {
    private let wants: (_ onboarding: StringID, _ screen: UInt16, _ code: UInt8, _ name: StringID?) -> Bool
    /// Whether `wants` reads the group: else its answers are kept for the whole scan.
    private let readsGroup: Bool
    /// The group (onboarding << 16 | screen) whose answers are kept: per kind code 0 not yet asked, 1 not wanted,
    /// 2 wanted; and per unknown analytics name. Blocks come a group at a time, so a new group starts them afresh.
    private var group = UInt64.max
    private var codes = [UInt8](repeating: 0, count: 256)
    private var names: [StringID: Bool] = [:]
    /// Blocks stepped over so far.
    package private(set) var skipped = 0

    /// A selection of the events for which `wants(onboarding, screen, code, name)` is true: the block's group (its key's
    /// onboarding, ``RecordFormat/noOnboarding`` for the events without a position, and screen), the kind code, and
    /// for code ``BlockKindCounts/unknownNameCode`` the string id of the analytics name outside the known ones (else
    /// `nil`). `readsGroup`: whether the answer depends on the group (if not, each code is asked once per scan).
    package init(
        readsGroup: Bool = true,
        _ wants: @escaping (_ onboarding: StringID, _ screen: UInt16, _ code: UInt8, _ name: StringID?) -> Bool
    ) {
        self.readsGroup = readsGroup
        self.wants = wants
    }

    /// Whether the block stored under `key`, of bytes `bytes`, is to be read: its header counts an event of a wanted
    /// kind, or does not decode (the read then reports the damage as any read does), or names a string past
    /// `stringLimit` (likewise).
    /// - Complexity: O(bytes of the header); each code and name asked of `wants` once per group (once, unless
    ///   `readsGroup`).
    func admits(_ key: EventKey, _ bytes: UnsafeRawBufferPointer, stringLimit: StringID) -> Bool {
        guard let header = try? blockHeader(key, bytes) else { return true }
        return admits(key, header, stringLimit: stringLimit)
    }

    /// Whether the block stored under `key` (`raw`: its key's bytes) is to be read, judged from its head in
    /// `block_heads` (none of the block's pages read); `nil` when `heads` has no head for it (a block of the event log,
    /// a damaged head, a snapshot reading around damage), to be judged from the block's own header.
    func admits(
        _ key: EventKey, _ raw: UnsafeRawBufferPointer, heads: inout HeadFollower?, stringLimit: StringID
    ) throws -> Bool? {
        guard let header = try heads?.header(key, raw) else { return nil }
        return admits(key, header, stringLimit: stringLimit)
    }

    /// ``admits(_:_:stringLimit:)`` for the block stored under `key` whose header is `header` (from its head).
    func admits(_ key: EventKey, _ header: EventBlockHeader, stringLimit: StringID) -> Bool {
        let blockGroup = UInt64(key.onboarding) << 16 | UInt64(key.screen)
        if blockGroup != group && (readsGroup || group == .max) {
            group = blockGroup
            codes.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
            names.removeAll(keepingCapacity: true)
        }
        for entry in header.kindCounts {
            if entry.code == BlockKindCounts.unknownNameCode {
                guard entry.name < stringLimit else { return true }
                if let known = names[entry.name] {
                    if known { return true }
                    continue
                }
                let wanted = wants(key.onboarding, key.screen, entry.code, entry.name)
                names[entry.name] = wanted
                if wanted { return true }
                continue
            }
            if codes[Int(entry.code)] == 0 {
                codes[Int(entry.code)] = wants(key.onboarding, key.screen, entry.code, nil) ? 2 : 1
            }
            if codes[Int(entry.code)] == 2 { return true }
        }
        skipped += 1
        return false
    }
}

/// The heads of the blocks that a walk of `events` in key order meets, read from `block_heads` in step with it (a folded
/// block's head is under the block's own key), so that a scan with a ``KindSelection`` looks at a block's header without
/// touching the block's pages: a step of a cursor that moves as the walk does, not a lookup per block.
struct HeadFollower {
    private var cursor: Cursor
    /// Whether the cursor stands on the first head at or after ``asked`` (else it is to be sought).
    private var positioned = false
    /// The last key asked for.
    private var asked: [UInt8] = []

    init(_ cursor: Cursor) {
        self.cursor = cursor
        asked.reserveCapacity(Layout.eventKeySize)
    }

    /// The header of the block stored under `key` (`raw`: its bytes as `events` holds them) from its head; `nil` when
    /// `block_heads` holds no head under it (a block of the event log, not yet folded) or the head does not decode
    /// (the block's own header is then read, and its damage reported as any read reports it). Keys asked in
    /// increasing order cost a step or two each; any other, a seek.
    mutating func header(_ key: EventKey, _ raw: UnsafeRawBufferPointer) throws -> EventBlockHeader? {
        var found = false
        if positioned, asked.withUnsafeBytes({ PageGuard.compare(raw, $0) }) >= 0 {
            // The cursor stands on the first head at or after the last key asked, so at most a few steps away.
            found = true
            var steps = 0
            while PageGuard.compare(cursor.key, raw) < 0 {
                steps += 1
                guard steps <= 4, try cursor.next() else {
                    found = false
                    break
                }
            }
        }
        if !found { found = try cursor.seek(raw) }
        positioned = found
        asked.removeAll(keepingCapacity: true)
        asked.append(contentsOf: raw)
        guard found, PageGuard.compare(cursor.key, raw) == 0 else { return nil }
        return try? blockHead(key, cursor.value)
    }
}
