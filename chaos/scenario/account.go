package scenario

// Account is limits:, the mock's provider account shared by every client
// of the scenario: continuous-refill buckets in policy time. Its decoding,
// validation and buckets are the limits work's (chaos/mock/account.go);
// the fleet's figures read RequestsPerMinute for recoveryMs.
type Account struct {
	RequestsPerMinute     int `yaml:"requestsPerMinute"`
	InputTokensPerMinute  int `yaml:"inputTokensPerMinute"`
	OutputTokensPerMinute int `yaml:"outputTokensPerMinute"`
	Concurrency           int `yaml:"concurrency"`
}
