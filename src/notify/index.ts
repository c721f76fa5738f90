/** Change notifications: Slack and signed webhooks, coalesced per environment. */
export { createNotifier, type Notifier, type NotifierOptions } from "./notifier.js";
export { deliver, parseRetryAfter, redactUrl, type DeliveryOptions, type DeliveryResult } from "./deliver.js";
export { buildRequest, selectChanges, DELIVERY_HEADER, type NotificationRequest } from "./request.js";
export { slackMessage, type SlackMessage } from "./slack.js";
export { describeChange, NOTIFICATION_EVENTS, type ChangeSummary, type NotificationEvent } from "./summary.js";
export { sign, webhookBody, SIGNATURE_HEADER, type WebhookBody, type WebhookChange } from "./webhook.js";
