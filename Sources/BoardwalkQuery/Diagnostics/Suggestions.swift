/// "Did you mean" suggestions, drawn only from candidates of the right kind (fields for fields,
/// aggregates for aggregates).
enum Suggestions {
    /// Words longer than this (in UTF-8 bytes) get no suggestion.
    static let longestWord = 256

    /// The candidate closest to `word` by edit distance, when it is close enough to be a plausible typo:
    /// at most a third of the longer word's length (and at least 1), or when one word contains the other.
    static func closest(to word: String, in candidates: [String]) -> String? {
        // No typo of a name is this long, and the edit distance is quadratic: a 10 MB literal compared with every
        // event name took 21 s.
        guard word.utf8.count <= Suggestions.longestWord else { return nil }
        let lowered = word.lowercased()
        // `screen_idx` → `screen`: a known name with a suffix added.
        if let underscore = lowered.lastIndex(of: "_"), candidates.contains(String(lowered[..<underscore])) {
            return String(lowered[..<underscore])
        }
        var best: (String, Int)?
        for candidate in candidates {
            let distance = editDistance(lowered, candidate)
            if best == nil || distance < best!.1 { best = (candidate, distance) }
        }
        guard let (candidate, distance) = best else { return nil }
        let limit = max(1, max(lowered.count, candidate.count) / 3)
        if distance <= limit { return candidate }
        // `ele` → `element`, `co` → `count`: a name cut short, when it starts one candidate, or starts several of
        // which the shortest starts all the others (`element` of `element` and `element_type`).
        if lowered.count >= 2 {
            let longer = candidates.filter { $0.hasPrefix(lowered) }.sorted { $0.count < $1.count }
            if let shortest = longer.first, longer.allSatisfy({ $0.hasPrefix(shortest) }) { return shortest }
        }
        // `cnt` → `count`: an abbreviation (the word's letters in order) of exactly one candidate.
        if lowered.count >= 3 {
            let expansions = candidates.filter { isSubsequence(lowered, of: $0) }
            if expansions.count == 1 { return expansions[0] }
        }
        return nil
    }

    /// The message suffix for a suggestion: "; did you mean `x`?" or "".
    static func didYouMean(_ word: String, in candidates: [String]) -> String {
        closest(to: word, in: candidates).map { "; did you mean `\($0)`?" } ?? ""
    }

    static func isSubsequence(_ word: String, of candidate: String) -> Bool {
        var rest = candidate[...]
        for c in word {
            guard let i = rest.firstIndex(of: c) else { return false }
            rest = rest[rest.index(after: i)...]
        }
        return true
    }
}
