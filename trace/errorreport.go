package trace

// MapStrings replaces every string of e (keys of Step included) by f of
// it: a reader that shows a report from an untrusted trace cleans it
// with one call.
func (e *ErrorReport) MapStrings(f func(string) string) {
	for _, p := range []*string{&e.ID, &e.Category, &e.FailureType, &e.Provider, &e.Model, &e.Message,
		&e.RequestID, &e.Reason} {
		*p = f(*p)
	}
	for i := range e.Tags {
		e.Tags[i] = f(e.Tags[i])
	}
	if len(e.Step) > 0 {
		step := make(map[string]string, len(e.Step))
		for k, v := range e.Step {
			step[f(k)] = f(v)
		}
		e.Step = step
	}
	for i := range e.Actions {
		a := &e.Actions[i]
		a.Priority, a.Text, a.Command, a.Setting = f(a.Priority), f(a.Text), f(a.Command), f(a.Setting)
	}
	for i := range e.History {
		h := &e.History[i]
		for _, p := range []*string{&h.Provider, &h.Model, &h.FailureType, &h.Message, &h.DelaySource, &h.SwitchedTo} {
			*p = f(*p)
		}
	}
}
