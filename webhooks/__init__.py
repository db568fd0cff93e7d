"""HTTP ingress (GitHub webhooks, agent event stream). Filled in by the integrator."""
