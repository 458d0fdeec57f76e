package cli

import (
	"context"
	"strings"

	client "github.com/wfd-dev/wfd/clients/go"
)

func whoamiCommand() *command {
	return &command{
		name:    "whoami",
		summary: "print who the server takes the caller for",
		detail: `Prints the caller's subject and roles (in --namespace) as the server authenticated them
(--token, or the client certificate), or "authentication off" when the
server does not authenticate callers (every caller may do everything).
Credentials the server refuses fail with Unauthenticated.`,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			return func(ctx context.Context, e *env, _ []string) error {
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					id, err := c.Identity(cctx)
					if err != nil {
						return err
					}
					p := cf.printer(e)
					switch {
					case p.json:
						return p.message(id)
					case !id.GetAuthentication():
						return p.line("authentication off")
					}
					return p.fields([][2]string{{"subject", id.GetSubject()}, {"namespace", id.GetNamespace()}, {"roles", strings.Join(id.GetRoles(), ", ")}})
				})
			}
		},
	}
}
