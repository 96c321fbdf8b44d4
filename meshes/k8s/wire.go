package k8s

// WireVersion is the language a coordinator (k8s run) and its workers
// (k8s worker, in the image) share: the worker's command line
// (JobSpec.WorkerArgs), the `loadgen run` flags of RunArgs and the report
// line a worker prints. Bump it with any change to them that an older or
// newer loadgen would read otherwise: a worker refuses a coordinator of
// another version, naming both, instead of failing on a renamed flag or
// misreading a result.
const WireVersion = 2 + wireNext

// FlagWire and FlagCoordinatorVersion are how the coordinator tells a
// worker its wire version and its loadgen version. FlagWire comes first
// on the worker's command line: a worker older than the check fails on it,
// as an unknown flag, before anything else.
const (
	FlagWire               = "--wire"
	FlagCoordinatorVersion = "--coordinator-version"
)
