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
    /// `nil`).
    package init(
        _ wants: @escaping (_ onboarding: StringID, _ screen: UInt16, _ code: UInt8, _ name: StringID?) -> Bool
    ) {
        self.wants = wants
    }

    /// Whether the block stored under `key`, of bytes `bytes`, is to be read: its header counts an event of a wanted
    /// kind, or does not decode (the read then reports the damage as any read does), or names a string past
    /// `stringLimit` (likewise).
    /// - Complexity: O(bytes of the header); each code and name asked of `wants` once per group.
    func admits(_ key: EventKey, _ bytes: UnsafeRawBufferPointer, stringLimit: StringID) -> Bool {
        guard let header = try? blockHeader(key, bytes) else { return true }
        let blockGroup = UInt64(key.onboarding) << 16 | UInt64(key.screen)
        if blockGroup != group {
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
