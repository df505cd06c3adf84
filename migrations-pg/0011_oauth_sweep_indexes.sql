CREATE INDEX "oauth_clients_created_idx" ON "oauth_clients" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "oauth_grants_client_idx" ON "oauth_grants" USING btree ("client_id");--> statement-breakpoint
CREATE INDEX "oauth_requests_status_created_idx" ON "oauth_requests" USING btree ("status","created_at_ms");--> statement-breakpoint
CREATE INDEX "oauth_requests_expires_idx" ON "oauth_requests" USING btree ("expires_at_ms");--> statement-breakpoint
CREATE INDEX "oauth_requests_client_idx" ON "oauth_requests" USING btree ("client_id");