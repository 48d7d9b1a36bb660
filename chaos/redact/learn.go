package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// RequestSecrets returns the key values a request carries, wherever a
// client may put one: headers named like a key (x-api-key, api-key,
// x-goog-api-key, x-auth-token, ...) and Authorization / Proxy-
// Authorization (the credentials after the scheme; Basic ones also
// decoded, and their password); query parameters named like a key (?key=,
// ?api_key=, ?access_token=, ?token=, ...); and in the body, form fields and
// JSON members named so at any depth (api_key, apiKey, token, access_token,
// secret, password, x-api-key, ...). Only string values count.
func RequestSecrets(req *http.Request, body []byte) []string {
	var out []string
	add := func(v string) {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	for name, vs := range req.Header {
		for _, v := range vs {
			switch {
			case strings.EqualFold(name, "Authorization"), strings.EqualFold(name, "Proxy-Authorization"):
				scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " ")
				if !ok {
					add(v)
					continue
				}
				add(cred)
				if strings.EqualFold(scheme, "basic") {
					if dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred)); err == nil {
						add(string(dec))
						if _, pass, ok := strings.Cut(string(dec), ":"); ok {
							add(pass)
						}
					}
				}
			case secretName(name):
				add(v)
			}
		}
	}
	if req.URL != nil {
		formSecrets(req.URL.RawQuery, add)
	}
	ct, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	trimmed := bytes.TrimSpace(body)
	switch {
	case ct == "application/x-www-form-urlencoded":
		formSecrets(string(body), add)
	case len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '['):
		jsonSecrets(trimmed, add)
	}
	return out
}

// formSecrets adds the values of the fields of a query or form named like
// a key.
func formSecrets(q string, add func(string)) {
	vals, _ := url.ParseQuery(q) // what parses is kept, errors or not
	for name, vs := range vals {
		if secretName(name) {
			for _, v := range vs {
				add(v)
			}
		}
	}
}

// maxJSONTokens bounds the JSON tokens of a body searched for keys.
const maxJSONTokens = 1 << 20

// jsonSecrets adds the string values of JSON members named like a key, at
// any depth (in arrays too: {"tokens": ...} is not one, {"token": ["v"]}
// is). Malformed JSON is searched up to the error.
func jsonSecrets(b []byte, add func(string)) {
	dec := json.NewDecoder(bytes.NewReader(b))
	// Per open object or array: whether the next token is a member name,
	// and whether the value being read is under a key-like name.
	// inherited: the container itself is a key-like member's value.
	type level struct{ object, wantName, inherited, secret bool }
	var stack []level
	under := func() bool { return len(stack) > 0 && stack[len(stack)-1].secret }
	for range maxJSONTokens {
		tok, err := dec.Token()
		if err != nil {
			return // io.EOF, or malformed from here on
		}
		var top *level
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if name, ok := tok.(string); ok && top != nil && top.object && top.wantName {
			top.wantName = false
			top.secret = top.inherited || secretName(name)
			continue
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				u := under()
				stack = append(stack, level{object: t == '{', wantName: t == '{', inherited: u, secret: u})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if under() {
				add(t)
			}
		}
		// A value ended: an object's next token is a name again.
		if len(stack) > 0 {
			if top := &stack[len(stack)-1]; top.object {
				top.wantName, top.secret = true, top.inherited
			}
		}
	}
}

// secretName reports whether a header, parameter or field name is that of
// a key or token: compared case-insensitively, without - and _, it is one
// of key, token, secret, password, passwd, auth, credential(s), or ends in
// apikey, token, secret, password, accesskey, secretkey, privatekey or
// subscriptionkey (x-api-key, apiKey, access_token, client_secret,
// x-goog-api-key, ocp-apim-subscription-key). max_tokens and
// idempotency_key are not.
func secretName(name string) bool {
	n := strings.Map(func(r rune) rune {
		switch {
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		}
		return -1
	}, name)
	switch n {
	case "key", "token", "secret", "password", "passwd", "auth", "credential", "credentials":
		return true
	}
	for _, suf := range []string{"apikey", "token", "secret", "password", "accesskey", "secretkey", "privatekey", "subscriptionkey"} {
		if strings.HasSuffix(n, suf) {
			return true
		}
	}
	return false
}
